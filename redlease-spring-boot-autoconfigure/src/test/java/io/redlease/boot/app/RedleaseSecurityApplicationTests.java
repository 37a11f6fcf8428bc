package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisNode;
import io.redlease.test.RedisServer;
import io.redlease.test.TlsCertificates;
import java.time.Duration;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/** The application over TLS (a Spring Boot SSL bundle) and with a password that must not leak. */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class RedleaseSecurityApplicationTests {

    private static final String SECRET = "s3cret-redlease-pw";

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(TestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run();
    }

    @Test
    void electsOverTlsConfiguredWithAnSslBundle() {
        try (TlsCertificates certs = TlsCertificates.generate()) {
            int tlsPort = RedisNode.freePort();
            try (RedisNode node =
                    RedisNode.start(certs.redisServerArgs(tlsPort, "--tls-auth-clients", "no"))) {
                try (ConfigurableApplicationContext context =
                        start(
                                "spring.ssl.bundle.pem.redis.truststore.certificate=file:"
                                        + certs.caCert(),
                                "spring.data.redis.host=127.0.0.1",
                                "spring.data.redis.port=" + tlsPort,
                                "spring.data.redis.ssl.enabled=true",
                                "spring.data.redis.ssl.bundle=redis",
                                "redlease.name={tls-" + System.nanoTime() + "}")) {
                    Elector elector = context.getBean(Elector.class);
                    await().atMost(Duration.ofSeconds(20)).until(elector::isLeader);
                    assertThat(
                                    elector.fencer()
                                            .orElseThrow()
                                            .set(elector.name() + ":state", "over tls"))
                            .isTrue();
                    assertThat(node.isAlive()).isTrue();
                }
            }
        }
    }

    @Test
    void thePasswordAppearsNowhereWeReport(
            @io.redlease.test.Dedicated(requirePass = SECRET) RedisServer server,
            CapturedOutput output) {
        String name = "{secret-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext context =
                start(
                        "spring.data.redis.url=redis://:"
                                + SECRET
                                + "@"
                                + server.host()
                                + ":"
                                + server.port(),
                        "redlease.name=" + name,
                        "redlease.ttl=1s",
                        "management.endpoints.web.exposure.include=redlease",
                        "logging.level.io.redlease=DEBUG")) {
            Elector elector = context.getBean(Elector.class);
            await().until(elector::isLeader);
            // Make the elector fail too, so errors are reported and logged.
            server.pause();
            await().until(() -> elector.redisFailure().isPresent());
            String health = context.getBean(RedleaseHealthIndicator.class).health().toString();
            server.resume();
            String endpoint = context.getBean(RedleaseEndpoint.class).elections().toString();
            String meters =
                    context.getBean(MeterRegistry.class).getMeters().stream()
                            .map(meter -> meter.getId().toString())
                            .collect(Collectors.joining("\n"));
            assertThat(health).contains("error").doesNotContain(SECRET);
            assertThat(endpoint).contains(name).doesNotContain(SECRET);
            assertThat(meters).contains("redlease.leader").doesNotContain(SECRET);
        }
        assertThat(output.getAll())
                .contains("redlease: elected leader of '" + name + "'")
                .doesNotContain(SECRET);
    }
}
