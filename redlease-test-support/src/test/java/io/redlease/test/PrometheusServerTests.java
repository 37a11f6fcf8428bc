package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Prometheus fixture: the install hint, and a server that scrapes and answers queries. */
class PrometheusServerTests {

    @Test
    void withoutTheBinariesItFailsWithOneLineNamingThePackage() {
        Binaries none = Binaries.of("", false);
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> PrometheusServer.promtool(none))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageContaining("apt-get install prometheus");
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(
                        () ->
                                PrometheusServer.start(
                                        none, "job", List.of(), Duration.ofSeconds(1), List.of()))
                .withMessage(PrometheusServer.MISSING_MESSAGE);
    }

    @Test
    void itScrapesItsTargetsAnswersQueriesAndCleansUp() {
        Path dir;
        try (PrometheusServer server =
                PrometheusServer.start(
                        "self",
                        List.of("127.0.0.1:" + Ports.freeLoopbackPort()),
                        Duration.ofSeconds(1),
                        List.of())) {
            assertThat(server.query("vector(2)"))
                    .singleElement()
                    .satisfies(sample -> assertThat(sample.value()).isEqualTo(2.0));
            // Label values come back whole, braces included (a Redis Cluster hash tag).
            assertThat(
                            server.query(
                                    "label_replace(vector(1), \"name\", \"{reports}\", \"\", \"\")"))
                    .singleElement()
                    .satisfies(sample -> assertThat(sample.label("name")).isEqualTo("{reports}"));
            // The target does not answer: Prometheus reports it down, with its labels.
            await().untilAsserted(
                            () ->
                                    assertThat(server.query("up{job=\"self\"}"))
                                            .singleElement()
                                            .satisfies(
                                                    sample -> {
                                                        assertThat(sample.value()).isZero();
                                                        assertThat(sample.label("job"))
                                                                .isEqualTo("self");
                                                    }));
            dir = server.dir();
            assertThat(Files.exists(dir.resolve("prometheus.yml"))).isTrue();
        }
        assertThat(dir).doesNotExist();
    }
}
