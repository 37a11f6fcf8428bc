package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elector;
import io.redlease.test.PrometheusServer;
import io.redlease.test.PrometheusServer.Sample;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Prometheus scrapes three instances of an application (in this JVM, each with its own
 * Prometheus registry, scrape endpoint and connection to Redis) and evaluates the shipped rules
 * ({@code ops/prometheus/redlease-rules.yml}) through a graceful hand-off, a crash, a refused
 * fenced write and a stop of every elector; its query results show that the series and labels the
 * rules use are the ones the application exports, and each alert fires when it should and only
 * then.
 */
@ExtendWith(RedisExtension.class)
class OperationsMonitoringTests {

    private static final String JOB = "redlease-app";

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Map<String, Instance> instances = new LinkedHashMap<>();

    private RedisServer redis;

    private PrometheusServer prometheus;

    private final String name = "redlease-monitoring:" + System.nanoTime();

    /** One instance: its scrape endpoint, its proxy to Redis and, while it runs, its context. */
    private static final class Instance {

        final HttpServer http;

        final TcpProxy proxy;

        final AtomicReference<PrometheusMeterRegistry> registry = new AtomicReference<>();

        ConfigurableApplicationContext context;

        Instance(HttpServer http, TcpProxy proxy) {
            this.http = http;
            this.proxy = proxy;
        }

        String target() {
            return "127.0.0.1:" + http.getAddress().getPort();
        }

        Elector elector() {
            return context.getBean(Elector.class);
        }
    }

    @BeforeEach
    void setUp(RedisServer redis) throws IOException {
        this.redis = redis;
        for (String id : List.of("a", "b", "c")) {
            instances.put(id, endpoint());
        }
    }

    @AfterEach
    void tearDown() {
        for (Instance instance : instances.values()) {
            instance.proxy.pass();
            if (instance.context != null) {
                instance.context.close();
            }
            instance.http.stop(0);
            instance.proxy.close();
        }
        if (prometheus != null) {
            prometheus.close();
        }
    }

    /** A scrape endpoint that serves the instance's registry, or 503 while it does not run. */
    private Instance endpoint() throws IOException {
        HttpServer http =
                HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        Instance instance = new Instance(http, TcpProxy.start(redis));
        http.createContext(
                "/metrics",
                exchange -> {
                    PrometheusMeterRegistry registry = instance.registry.get();
                    byte[] body =
                            (registry == null ? "stopped" : registry.scrape())
                                    .getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders()
                            .add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                    exchange.sendResponseHeaders(registry == null ? 503 : 200, body.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                });
        http.start();
        return instance;
    }

    /**
     * The terms won, summed over the running instances' registries: one at a healthy start, more
     * when a loaded machine let a TTL of 1 s lapse while the instances started.
     */
    private double termsWon() {
        return instances.values().stream()
                .map(instance -> instance.registry.get())
                .filter(Objects::nonNull)
                .mapToDouble(
                        registry ->
                                registry
                                        .find(RedleaseMetrics.ELECTIONS)
                                        .tag(RedleaseMetrics.TAG_NAME, name)
                                        .functionCounters()
                                        .stream()
                                        .mapToDouble(FunctionCounter::count)
                                        .sum())
                .sum();
    }

    private void start(String id) {
        Instance instance = instances.get(id);
        instance.context =
                new SpringApplicationBuilder(TestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=redis://"
                                        + instance.proxy.host()
                                        + ":"
                                        + instance.proxy.port(),
                                "spring.data.redis.timeout=500ms",
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms")
                        .run();
        instance.registry.set(instance.context.getBean(PrometheusMeterRegistry.class));
    }

    private String leader() {
        return instances.entrySet().stream()
                .filter(entry -> entry.getValue().context != null)
                .filter(entry -> entry.getValue().registry.get() != null)
                .filter(entry -> entry.getValue().elector().isLeader())
                .map(Map.Entry::getKey)
                .findFirst()
                .orElseThrow();
    }

    private List<Sample> query(String promql) {
        return prometheus.query(promql);
    }

    /** Waits until Prometheus sees exactly the given instance leading the election. */
    private void awaitLeaderSeen(String id) {
        String target = instances.get(id).target();
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            List<Sample> leaders =
                                    query("redlease_leader{name=\"" + name + "\"} == 1");
                            assertThat(leaders)
                                    .extracting(s -> s.label("instance"))
                                    .containsExactly(target);
                            assertThat(leaders.get(0).labels())
                                    .containsEntry("job", JOB)
                                    .containsEntry("name", name);
                            assertThat(query("redlease:leaders:sum{name=\"" + name + "\"}"))
                                    .extracting(Sample::value)
                                    .containsExactly(1.0);
                        });
    }

    private List<String> firing() {
        return query("ALERTS{name=\"" + name + "\", alertstate=\"firing\"}").stream()
                .map(s -> s.label("alertname"))
                .toList();
    }

    @Test
    void prometheusSeesHandOffCrashRefusedWriteAndNoLeaderAsTheRulesExpect() throws Exception {
        Path rules =
                Path.of("")
                        .toAbsolutePath()
                        .getParent()
                        .resolve("ops/prometheus/redlease-rules.yml");
        assertThat(rules).exists();
        prometheus =
                PrometheusServer.start(
                        JOB,
                        instances.values().stream().map(Instance::target).toList(),
                        Duration.ofSeconds(1),
                        List.of(rules));
        instances.keySet().forEach(this::start);

        // Everyone exports the series the rules use, with the job, instance and name labels.
        String first = leader();
        awaitLeaderSeen(first);
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            assertThat(query("redlease_lease_ttl_seconds{name=\"" + name + "\"}"))
                                    .hasSize(3)
                                    .allSatisfy(s -> assertThat(s.value()).isEqualTo(1.0));
                            assertThat(
                                            query(
                                                    "redlease:lease_ttl_seconds:max{name=\""
                                                            + name
                                                            + "\"}"))
                                    .extracting(Sample::value)
                                    .containsExactly(1.0);
                            assertThat(
                                            query(
                                                    "redlease_lease_age_seconds{name=\""
                                                            + name
                                                            + "\"} > 0"))
                                    .extracting(s -> s.label("instance"))
                                    .containsExactly(instances.get(first).target());
                            assertThat(
                                            query(
                                                    "redlease_redis_calls_seconds_max{name=\""
                                                            + name
                                                            + "\", operation=\"renew\","
                                                            + " outcome=\"success\"}"))
                                    .extracting(s -> s.label("instance"))
                                    .contains(instances.get(first).target());
                            assertThat(
                                            query(
                                                    "sum by (job, name)"
                                                            + " (redlease_elections_terms_total{name=\""
                                                            + name
                                                            + "\"})"))
                                    .extracting(Sample::value)
                                    .containsExactly(termsWon());
                            assertThat(
                                            query(
                                                    "redlease_fence_writes_total{name=\""
                                                            + name
                                                            + "\", result=\"rejected\","
                                                            + " store=\"redis\"}"))
                                    .hasSize(3);
                            assertThat(
                                            query(
                                                    "redlease_stepdowns_terms_total{name=\""
                                                            + name
                                                            + "\", reason=\"shutdown\"}"))
                                    .hasSize(3);
                        });
        assertThat(firing()).isEmpty();

        // A graceful hand-off: the leader shuts down, another instance takes over.
        Instance leaving = instances.get(first);
        leaving.context.close();
        leaving.context = null;
        leaving.registry.set(null);
        await().atMost(WAIT).until(() -> instances.values().stream().anyMatch(this::leads));
        String second = leader();
        awaitLeaderSeen(second);

        // A crash: the new leader stops answering (no Redis, no scrapes); its lease lapses.
        Instance crashed = instances.get(second);
        crashed.registry.set(null);
        crashed.proxy.blackhole();
        String third =
                instances.keySet().stream()
                        .filter(id -> !id.equals(first) && !id.equals(second))
                        .findFirst()
                        .orElseThrow();
        await().atMost(WAIT).until(() -> instances.get(third).elector().isLeader());
        awaitLeaderSeen(third);
        assertThat(
                        query(
                                "sum by (job, name) (changes(X[5m]) - resets(X[5m]))"
                                        .replace(
                                                "X",
                                                "redlease_elections_terms_total{name=\""
                                                        + name
                                                        + "\"}")))
                .extracting(Sample::value)
                .allSatisfy(terms -> assertThat(terms).isLessThan(5.0));
        assertThat(firing()).doesNotContain("RedleaseNoLeader", "RedleaseLeadershipFlapping");

        // A write with the first term's token is refused, and the alert says so.
        long firstToken = 1;
        Elector current = instances.get(third).elector();
        assertThat(current.token().orElseThrow()).isGreaterThan(firstToken);
        assertThat(current.fencer(firstToken).set(name + ":state", "stale")).isFalse();
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            assertThat(
                                            query(
                                                    "redlease_fence_writes_total{name=\""
                                                            + name
                                                            + "\", result=\"rejected\"} == 1"))
                                    .extracting(s -> s.label("instance"), s -> s.label("store"))
                                    .containsExactly(tuple(instances.get(third).target(), "redis"));
                            assertThat(firing()).contains("RedleaseFencedWritesRefused");
                        });

        // No leader: the last elector stops while its application runs on.
        current.stop();
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            assertThat(query("redlease:leaders:sum{name=\"" + name + "\"}"))
                                    .extracting(Sample::value)
                                    .containsExactly(0.0);
                            assertThat(firing()).contains("RedleaseNoLeader");
                        });
        List<Sample> noLeader =
                query("time() - redlease:leader_seen:timestamp_seconds{name=\"" + name + "\"}");
        assertThat(noLeader).hasSize(1);
        assertThat(noLeader.get(0).value()).isGreaterThan(3.0);

        // Never two instances reporting leadership for long, at any point of the test (scrapes
        // that straddle a hand-off may make the alert pending, never firing).
        assertThat(
                        query(
                                "max_over_time(ALERTS{alertname=\"RedleaseMultipleLeaders\","
                                        + " alertstate=\"firing\", name=\""
                                        + name
                                        + "\"}[10m])"))
                .isEmpty();
    }

    private boolean leads(Instance instance) {
        return instance.context != null && instance.elector().isLeader();
    }
}
