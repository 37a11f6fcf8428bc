package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway certificate authority and a server certificate for {@code 127.0.0.1} and {@code
 * localhost}, generated with the {@code openssl} command line tool into a temporary directory.
 *
 * @param dir the directory holding the files; delete it with {@link #close()}
 * @param caCert the CA certificate (PEM), for clients' trust
 * @param serverCert the server certificate (PEM), signed by the CA
 * @param serverKey the server's private key (PEM, unencrypted)
 */
public record TlsCertificates(Path dir, Path caCert, Path serverCert, Path serverKey)
        implements AutoCloseable {

    /**
     * Generates the CA and the server certificate, valid for one day.
     *
     * @return the files
     * @throws IllegalStateException if {@code openssl} is missing or fails
     */
    public static TlsCertificates generate() {
        Path dir = RedisNode.tempDir("redlease-tls-");
        Path caKey = dir.resolve("ca.key");
        Path caCert = dir.resolve("ca.crt");
        Path key = dir.resolve("server.key");
        Path csr = dir.resolve("server.csr");
        Path cert = dir.resolve("server.crt");
        Path ext = dir.resolve("server.ext");
        try {
            Files.writeString(
                    ext,
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                            + "keyUsage=digitalSignature,keyEncipherment\n"
                            + "extendedKeyUsage=serverAuth\n",
                    StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        openssl(
                dir,
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=redlease-test-ca",
                "-keyout",
                caKey.toString(),
                "-out",
                caCert.toString());
        openssl(
                dir,
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=127.0.0.1",
                "-keyout",
                key.toString(),
                "-out",
                csr.toString());
        openssl(
                dir,
                "x509",
                "-req",
                "-in",
                csr.toString(),
                "-CA",
                caCert.toString(),
                "-CAkey",
                caKey.toString(),
                "-CAcreateserial",
                "-days",
                "1",
                "-extfile",
                ext.toString(),
                "-out",
                cert.toString());
        return new TlsCertificates(dir, caCert, cert, key);
    }

    private static void openssl(Path dir, String... args) {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        try {
            Process process =
                    new ProcessBuilder(command)
                            .directory(dir.toFile())
                            .redirectErrorStream(true)
                            .start();
            process.getOutputStream().close();
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(
                        "openssl "
                                + String.join(" ", args)
                                + " failed: "
                                + new String(output, StandardCharsets.UTF_8));
            }
        } catch (IOException ex) {
            throw new IllegalStateException(
                    "openssl is needed to generate test certificates: " + ex.getMessage(), ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running openssl", ex);
        }
    }

    /**
     * Returns {@code redis-server} arguments that serve TLS with these files on a port, followed by
     * any extra arguments (for example {@code "--tls-auth-clients", "no"}).
     *
     * @param tlsPort the TLS port
     * @param extraArgs more server arguments
     * @return the arguments, for {@link RedisNode#start(String...)}
     */
    public String[] redisServerArgs(int tlsPort, String... extraArgs) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--tls-port",
                                Integer.toString(tlsPort),
                                "--tls-cert-file",
                                serverCert.toString(),
                                "--tls-key-file",
                                serverKey.toString(),
                                "--tls-ca-cert-file",
                                caCert.toString()));
        args.addAll(List.of(extraArgs));
        return args.toArray(String[]::new);
    }

    /** Deletes the directory with the keys and certificates. */
    @Override
    public void close() {
        Processes.deleteRecursively(dir);
    }
}
