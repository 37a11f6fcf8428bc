package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TlsCertificatesTests {

    @Test
    void generatesACaAndAServerCertificateForLoopbackThatRedisAccepts() throws Exception {
        Path dir;
        try (TlsCertificates certs = TlsCertificates.generate()) {
            dir = certs.dir();
            X509Certificate ca = read(certs.caCert());
            X509Certificate server = read(certs.serverCert());
            server.verify(ca.getPublicKey());
            List<Object> names = new ArrayList<>();
            server.getSubjectAlternativeNames().forEach(name -> names.add(name.get(1)));
            assertThat(names).contains("127.0.0.1", "localhost");
            assertThat(certs.serverKey()).exists();
            int tlsPort = RedisNode.freePort();
            try (RedisNode node = RedisNode.start(certs.redisServerArgs(tlsPort))) {
                assertThat(node.command("CONFIG", "GET", "tls-port"))
                        .isEqualTo(List.of("tls-port", Integer.toString(tlsPort)));
            }
        }
        assertThat(dir).doesNotExist();
    }

    private static X509Certificate read(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate)
                    CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
