package io.redlease.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.redlease.boot.observation.ObservedLeaderOnlyRuns;
import io.redlease.core.Observer;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.annotation.LeaderOnlySkipListener;
import io.redlease.test.PrometheusServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shipped Prometheus rules ({@code ops/prometheus}) pass their {@code promtool} unit tests, and
 * they and the Grafana dashboard ({@code ops/grafana}) use only series the meters export.
 */
class PrometheusRulesTests {

    private static final Pattern SERIES = Pattern.compile("redlease_[a-z_]+");

    static Path ops() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("ops/prometheus"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("a parent directory holding ops/prometheus").isNotNull();
        return dir.resolve("ops");
    }

    @Test
    void theRulesPassTheirPromtoolUnitTests() throws Exception {
        Path promtool = PrometheusServer.promtool();
        List<String> command = new ArrayList<>(List.of(promtool.toString(), "test", "rules"));
        try (Stream<Path> files = Files.list(ops().resolve("prometheus"))) {
            files.filter(file -> file.getFileName().toString().endsWith("-test.yml"))
                    .sorted()
                    .forEach(file -> command.add(file.toString()));
        }
        assertThat(command).hasSizeGreaterThan(3);
        assertThat(run(command)).contains("SUCCESS");
    }

    @Test
    void theRulesAreValid() throws Exception {
        Path rules = ops().resolve("prometheus/redlease-rules.yml");
        assertThat(
                        run(
                                List.of(
                                        PrometheusServer.promtool().toString(),
                                        "check",
                                        "rules",
                                        rules.toString())))
                .contains("SUCCESS");
    }

    /**
     * The rules name only series the meters export. The dashboard (and the rules again, labels
     * included) are checked against a running application's scrape by {@code
     * DashboardContractTests}: its once-per-slot panels need a scheduled job, which this registry
     * of the election's meters alone does not have.
     */
    @Test
    void theRulesUseOnlyExportedSeries() throws IOException {
        Set<String> exported = exportedSeries();
        for (Path file : List.of(ops().resolve("prometheus/redlease-rules.yml"))) {
            Set<String> used = new TreeSet<>();
            // Label names of the observations start with redlease_ too: drop matchers, groupings
            // and legends before looking for series.
            Matcher series =
                    SERIES.matcher(
                            Files.readString(file)
                                    .replaceAll("\\{[^}]*\\}", "")
                                    .replaceAll("\\b(by|without)\\s*\\([^)]*\\)", ""));
            while (series.find()) {
                used.add(series.group());
            }
            assertThat(used).as("series used by %s", file.getFileName()).isNotEmpty();
            assertThat(exported)
                    .as("series exported, used by " + file.getFileName())
                    .containsAll(used);
        }
    }

    /** Returns the series names a Prometheus registry exports for every redlease meter. */
    private static Set<String> exportedSeries() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RedleaseMetrics metrics = new RedleaseMetrics();
        metrics.bindTo(registry);
        Observer observer = metrics.observer("orders");
        metrics.leaseTtl("orders", Duration.ofSeconds(5));
        metrics.registerStore("orders", RedleaseMetrics.STORE_JDBC);
        metrics.registerFenceClaims("orders");
        observer.onElected(1);
        // The leader-only run observation's timer (docs/observability.md).
        ObservationRegistry observations = ObservationRegistry.create();
        observations
                .observationConfig()
                .observationHandler(new DefaultMeterObservationHandler(registry));
        try {
            new ObservedLeaderOnlyRuns(observations, null)
                    .notRun(
                            new LeaderOnlyRun(
                                    new LeaderOnlySkipListener.MethodRef(
                                            "orders",
                                            PrometheusRulesTests.class,
                                            Object.class.getMethod("hashCode")),
                                    null,
                                    0,
                                    null,
                                    "i-1"));
        } catch (NoSuchMethodException ex) {
            throw new IllegalStateException(ex);
        }
        Set<String> names = new TreeSet<>();
        for (String line : registry.scrape().split("\n")) {
            Matcher series = SERIES.matcher(line);
            if (!line.startsWith("#") && series.lookingAt()) {
                names.add(series.group());
            }
        }
        return names;
    }

    private static String run(List<String> command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
        assertThat(process.exitValue())
                .as("exit code of %s; output:%n%s", command, output)
                .isZero();
        return output;
    }
}
