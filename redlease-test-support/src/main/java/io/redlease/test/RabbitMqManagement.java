package io.redlease.test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP API of RabbitMQ's management plugin, as far as the fixture needs it (virtual hosts and
 * their permissions), and a probe of the AMQP port.
 */
final class RabbitMqManagement {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final int PROBE_TIMEOUT_MILLIS = 1_000;
    private static final byte[] AMQP_0_9_1 = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};

    private final URI base;
    private final String authorization;
    private final HttpClient client;

    RabbitMqManagement(URI base, String username, String password) {
        String root = base.toString();
        this.base = URI.create(root.endsWith("/") ? root : root + "/");
        this.authorization =
                "Basic "
                        + Base64.getEncoder()
                                .encodeToString(
                                        (username + ":" + password)
                                                .getBytes(StandardCharsets.UTF_8));
        // HTTP/1.1: the default, HTTP/2 over an upgrade, makes the broker drop requests with a
        // body.
        this.client =
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(TIMEOUT)
                        .build();
    }

    /** Returns the base URL, ending in {@code /}. */
    URI base() {
        return base;
    }

    /** Returns whether {@code GET /api/overview} answers 200. */
    boolean isUp() {
        try {
            return send("GET", "api/overview", null) == 200;
        } catch (UncheckedIOException ex) {
            return false;
        }
    }

    /** Creates a virtual host and gives {@code user} every permission on it. */
    void createVirtualHost(String name, String user) {
        expect(send("PUT", "api/vhosts/" + encode(name), "{}"), "create virtual host " + name);
        expect(
                send(
                        "PUT",
                        "api/permissions/" + encode(name) + "/" + encode(user),
                        "{\"configure\":\".*\",\"write\":\".*\",\"read\":\".*\"}"),
                "grant " + user + " permissions on virtual host " + name);
    }

    /** Deletes a virtual host with everything in it; a missing one is no error. */
    void deleteVirtualHost(String name) {
        int status = send("DELETE", "api/vhosts/" + encode(name), null);
        if (status != 404) {
            expect(status, "delete virtual host " + name);
        }
    }

    private void expect(int status, String what) {
        if (status / 100 != 2) {
            throw new IllegalStateException(
                    "Could not " + what + ": " + base + " answered HTTP " + status);
        }
    }

    private int send(String method, String path, @Nullable String body) {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(base.resolve(path))
                        .timeout(TIMEOUT)
                        .header("Authorization", authorization)
                        .method(
                                method,
                                body == null
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        try {
            return client.send(request.build(), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException ex) {
            throw new UncheckedIOException(
                    "RabbitMQ management API " + method + " " + base.resolve(path) + " failed", ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while calling " + base, ex);
        }
    }

    /** Percent-encodes a path segment; {@code /} (the default virtual host) becomes {@code %2F}. */
    static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Returns whether the port answers the AMQP 0-9-1 protocol header with a {@code
     * connection.start} frame, as a broker that accepts connections does.
     */
    static boolean answersAmqp(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), PROBE_TIMEOUT_MILLIS);
            socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write(AMQP_0_9_1);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int type = in.readUnsignedByte();
            int channel = in.readUnsignedShort();
            in.readInt(); // payload size
            int classId = in.readUnsignedShort();
            int methodId = in.readUnsignedShort();
            return type == 1 && channel == 0 && classId == 10 && methodId == 10;
        } catch (IOException ex) {
            return false;
        }
    }
}
