package io.redlease.boot.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.redlease.core.Elector;
import io.redlease.test.PrometheusServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.yaml.snakeyaml.Yaml;

/**
 * The shipped dashboard ({@code ops/grafana}) and alert rules ({@code ops/prometheus}) against what
 * a running application exports, as a real Prometheus scrapes it: every {@code redlease_*} series a
 * panel or a rule names is among the scraped series, every label they match or group by is one of
 * that series' labels there (or one Prometheus adds: {@code job}, {@code instance}), every panel's
 * query runs on the scraped data, and every panel's expression parses ({@code promtool}). The
 * application has a once-per-slot job and a job run per partition, so their meters are exported.
 */
@ExtendWith(RedisExtension.class)
class DashboardContractTests {

    private static final Pattern SERIES = Pattern.compile("\\b(redlease_[a-z_]+)\\b");

    private static final Pattern MATCHER =
            Pattern.compile("\\b([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)\\s*\"");

    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");

    /** Labels the Prometheus server adds to every scraped series. */
    private static final Set<String> TARGET_LABELS = Set.of("job", "instance");

    private static final Duration WAIT = Duration.ofSeconds(30);

    private ConfigurableApplicationContext context;

    private HttpServer scrapeEndpoint;

    private PrometheusServer prometheus;

    @AfterEach
    void tearDown() {
        if (prometheus != null) {
            prometheus.close();
        }
        if (scrapeEndpoint != null) {
            scrapeEndpoint.stop(0);
        }
        if (context != null) {
            context.close();
        }
    }

    @Test
    void panelsAndRulesUseOnlyWhatARunningApplicationExports(RedisServer server) throws Exception {
        String name = "redlease-dashboard:" + System.nanoTime();
        context =
                new SpringApplicationBuilder(ObservationReviewApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=dashboard",
                                "redlease.ttl=1s",
                                "redlease.partitions.shards.count=2")
                        .run();
        Elector elector = context.getBean(Elector.class);
        await().atMost(WAIT).until(elector::isLeader);
        // A once-per-slot run and a run per partition: their meters and observations exist.
        ObservationReviewApplication.Reports reports =
                context.getBean(ObservationReviewApplication.Reports.class);
        ObservationReviewApplication.Shards shards =
                context.getBean(ObservationReviewApplication.Shards.class);
        await().atMost(WAIT)
                .until(() -> !reports.contexts().isEmpty() && !shards.contexts().isEmpty());
        PrometheusMeterRegistry registry = context.getBean(PrometheusMeterRegistry.class);
        Set<String> expected = exported(registry.scrape()).keySet();
        scrapeEndpoint = endpoint(registry);
        // A real Prometheus scrapes the application: the series and labels as a query sees them
        // (an exported label that Prometheus sets itself, such as job, would be renamed
        // exported_job).
        prometheus =
                PrometheusServer.start(
                        "redlease-app",
                        List.of("127.0.0.1:" + scrapeEndpoint.getAddress().getPort()),
                        Duration.ofSeconds(1),
                        List.of());
        Map<String, Set<String>> exported = new HashMap<>();
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            exported.clear();
                            exported.putAll(scraped(prometheus));
                            assertThat(exported.keySet())
                                    .as("series Prometheus scraped")
                                    .containsAll(
                                            expected.stream()
                                                    .filter(
                                                            series ->
                                                                    series.startsWith("redlease_"))
                                                    .toList());
                        });

        Path ops = ops();
        List<String> problems = new ArrayList<>();
        Map<String, String> panels =
                panelExpressions(ops.resolve("grafana/redlease-dashboard.json"));
        assertThat(panels).isNotEmpty();
        for (Map.Entry<String, String> panel : panels.entrySet()) {
            check("panel '" + panel.getKey() + "'", panel.getValue(), exported, problems);
            // Each panel's query runs on the scraped data (an instant vector, empty or not).
            prometheus.query(concrete(panel.getValue()));
        }
        Map<String, String> rules = ruleExpressions(ops.resolve("prometheus/redlease-rules.yml"));
        assertThat(rules).isNotEmpty();
        for (Map.Entry<String, String> rule : rules.entrySet()) {
            check("rule '" + rule.getKey() + "'", rule.getValue(), exported, problems);
        }
        assertThat(problems).as("exported: %s", exported).isEmpty();
    }

    @Test
    void everyPanelExpressionParses() throws Exception {
        Map<String, String> panels =
                panelExpressions(ops().resolve("grafana/redlease-dashboard.json"));
        StringBuilder rules = new StringBuilder("groups:\n  - name: panels\n    rules:\n");
        int i = 0;
        for (String expr : panels.values()) {
            rules.append("      - record: panel:")
                    .append(i++)
                    .append("\n        expr: '")
                    .append(concrete(expr).replace("'", "''"))
                    .append("'\n");
        }
        Path file = Files.createTempFile("redlease-panels", ".yml");
        try {
            Files.writeString(file, rules);
            assertThat(promtool("check", "rules", file.toString())).contains("SUCCESS");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Returns a panel's expression with the dashboard's variables given values. */
    private static String concrete(String expr) {
        return expr.replace("$__rate_interval", "1m")
                .replace("$job", ".*")
                .replace("$election", ".*");
    }

    /** Returns each redlease series a Prometheus server holds, with its label names. */
    private static Map<String, Set<String>> scraped(PrometheusServer prometheus) {
        Map<String, Set<String>> series = new HashMap<>();
        for (PrometheusServer.Sample sample : prometheus.query("{__name__=~\"redlease_.+\"}")) {
            Set<String> labels = new TreeSet<>(sample.labels().keySet());
            labels.remove("__name__");
            series.computeIfAbsent(sample.label("__name__"), key -> new TreeSet<>()).addAll(labels);
        }
        return series;
    }

    /** Serves the registry's scrape at {@code /metrics} on a free loopback port. */
    private static HttpServer endpoint(PrometheusMeterRegistry registry) throws IOException {
        HttpServer http =
                HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext(
                "/metrics",
                exchange -> {
                    byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders()
                            .add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                    exchange.sendResponseHeaders(200, body.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                });
        http.start();
        return http;
    }

    /** Checks the series and labels of one expression against the export. */
    private static void check(
            String where, String expr, Map<String, Set<String>> exported, List<String> problems) {
        Set<String> series = new TreeSet<>();
        // Series names, once label matchers and groupings (whose names may start alike) are out.
        Matcher names =
                SERIES.matcher(GROUPING.matcher(expr.replaceAll("\\{[^}]*\\}", "")).replaceAll(""));
        while (names.find()) {
            series.add(names.group(1));
        }
        Set<String> labels = new HashSet<>();
        for (String series1 : series) {
            if (!exported.containsKey(series1)) {
                problems.add(
                        where + " uses " + series1 + ", which the application does not export");
            } else {
                labels.addAll(exported.get(series1));
            }
        }
        if (series.isEmpty()) {
            return; // ALERTS and the like: not the application's
        }
        Set<String> used = new TreeSet<>();
        Matcher matchers = MATCHER.matcher(expr);
        while (matchers.find()) {
            used.add(matchers.group(1));
        }
        Matcher groupings = GROUPING.matcher(expr);
        while (groupings.find()) {
            for (String label : groupings.group(1).split(",")) {
                if (!label.isBlank()) {
                    used.add(label.trim());
                }
            }
        }
        for (String label : used) {
            if (!TARGET_LABELS.contains(label) && !labels.contains(label)) {
                problems.add(
                        where + " uses the label " + label + ", which none of " + series + " has");
            }
        }
    }

    /** Returns each exported series with its label names. */
    static Map<String, Set<String>> exported(String scrape) {
        Map<String, Set<String>> series = new HashMap<>();
        Pattern sample = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s");
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
        for (String line : scrape.split("\n")) {
            Matcher matcher = sample.matcher(line);
            if (line.startsWith("#") || !matcher.find()) {
                continue;
            }
            Set<String> labels = series.computeIfAbsent(matcher.group(1), key -> new TreeSet<>());
            if (matcher.group(2) != null) {
                Matcher labels1 = label.matcher(matcher.group(2));
                while (labels1.find()) {
                    labels.add(labels1.group(1));
                }
            }
        }
        return series;
    }

    /** Returns each target's expression in the dashboard, numbered in order. */
    static Map<String, String> panelExpressions(Path dashboard) throws Exception {
        Matcher exprs =
                Pattern.compile("\"expr\":\\s*\"((?:[^\"\\\\]|\\\\.)*)\"")
                        .matcher(Files.readString(dashboard, StandardCharsets.UTF_8));
        Map<String, String> expressions = new LinkedHashMap<>();
        while (exprs.find()) {
            expressions.put(
                    "#" + expressions.size(),
                    exprs.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
        return expressions;
    }

    @SuppressWarnings("unchecked")
    static Map<String, String> ruleExpressions(Path rules) throws Exception {
        Map<String, Object> root = new Yaml().load(Files.readString(rules, StandardCharsets.UTF_8));
        Map<String, String> expressions = new LinkedHashMap<>();
        for (Map<String, Object> group : (List<Map<String, Object>>) root.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                Object id = rule.containsKey("alert") ? rule.get("alert") : rule.get("record");
                expressions.put(String.valueOf(id), String.valueOf(rule.get("expr")));
            }
        }
        return expressions;
    }

    static Path ops() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("ops/prometheus"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("a parent directory holding ops/prometheus").isNotNull();
        return dir.resolve("ops");
    }

    private static String promtool(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(PrometheusServer.promtool().toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
        assertThat(process.exitValue())
                .as("exit code of %s; output:%n%s", command, output)
                .isZero();
        return output;
    }
}
