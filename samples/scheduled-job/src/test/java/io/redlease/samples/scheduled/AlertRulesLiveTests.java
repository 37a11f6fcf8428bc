package io.redlease.samples.scheduled;

import static io.redlease.test.AppNodes.after;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.PrometheusServer;
import io.redlease.test.PrometheusServer.Sample;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The shipped alert rules against live copies of this sample: three JVMs serve {@code
 * /actuator/prometheus}, a real Prometheus scrapes them every second with {@code
 * ops/prometheus/redlease-rules.yml} loaded, and the test evaluates every alert's expression, read
 * from that file unchanged, through Prometheus's query API. Each expression is empty while the
 * election is healthy (start, a graceful hand-off, a crash) and returns the expected series once
 * its condition is induced: a frozen leader's stale fenced write, slow renewals (a delayed link),
 * Redis paused (no leader), and a split brain (one instance's link moved to another Redis server
 * that has no lease, as after a failover that lost it); the churn of it all, topped up by
 * resignations, is the flapping. Expressions are evaluated, not alerts: their {@code for} windows
 * would only add waiting.
 */
@ExtendWith(RedisExtension.class)
class AlertRulesLiveTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final String JOB = "scheduled-job";

    private static final String FLAPPING = "RedleaseLeadershipFlapping";

    private final HttpClient http = HttpClient.newHttpClient();

    private static final List<String> ALERTS =
            List.of(
                    "RedleaseNoLeader",
                    "RedleaseMultipleLeaders",
                    FLAPPING,
                    "RedleaseFencedWritesRefused",
                    "RedleaseLeaseNearExpiry",
                    "RedleaseRenewSlow");

    private final String name = "{alerts-" + System.nanoTime() + "}";

    private final Map<String, TcpProxy> proxies = new LinkedHashMap<>();

    private final Map<String, Integer> ports = new LinkedHashMap<>();

    private RedisServer redis;

    private RedisServer other;

    private AppNodes nodes;

    private PrometheusServer prometheus;

    private Map<String, String> expressions;

    @BeforeEach
    void setUp(RedisServer redis) throws IOException {
        this.redis = redis;
        this.other = RedisServer.start();
        for (String id : List.of("a", "b", "c")) {
            proxies.put(id, TcpProxy.start(redis));
            ports.put(id, freePort());
        }
        this.nodes =
                new AppNodes(
                        ScheduledJobApplication.class,
                        this::arguments,
                        Path.of("target", "alert-rules-live-events.txt"));
        this.expressions = alertExpressions(rules());
        assertThat(expressions.keySet()).containsExactlyInAnyOrderElementsOf(ALERTS);
    }

    @AfterEach
    void tearDown() throws IOException {
        if (nodes != null) {
            nodes.close();
        }
        proxies.values().forEach(TcpProxy::close);
        if (prometheus != null) {
            prometheus.close();
        }
        if (redis.isPaused()) {
            redis.resume();
        }
        other.close();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static Path rules() {
        Path rules =
                Path.of("").toAbsolutePath().resolve("../../ops/prometheus/redlease-rules.yml");
        assertThat(rules).exists();
        return rules.normalize();
    }

    /** Reads each alert's expression from the rule file: a one-line or a block ({@code |}). */
    static Map<String, String> alertExpressions(Path rules) {
        List<String> lines;
        try {
            lines = Files.readAllLines(rules);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        Pattern alert = Pattern.compile("^\\s*- alert: (\\S+)\\s*$");
        Pattern expr = Pattern.compile("^(\\s*)expr: (.*)$");
        Map<String, String> found = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher name = alert.matcher(lines.get(i));
            if (!name.matches()) {
                continue;
            }
            for (int j = i + 1; j < lines.size(); j++) {
                Matcher body = expr.matcher(lines.get(j));
                if (!body.matches()) {
                    continue;
                }
                if (!body.group(2).trim().equals("|")) {
                    found.put(name.group(1), body.group(2).trim());
                    break;
                }
                int indent = body.group(1).length();
                StringBuilder text = new StringBuilder();
                for (int k = j + 1; k < lines.size(); k++) {
                    String line = lines.get(k);
                    if (!line.isBlank() && line.length() - line.stripLeading().length() <= indent) {
                        break;
                    }
                    text.append(line.strip()).append('\n');
                }
                found.put(name.group(1), text.toString().trim());
                break;
            }
        }
        return found;
    }

    private List<String> arguments(String id) {
        TcpProxy proxy = proxies.get(id);
        return List.of(
                "--spring.main.banner-mode=off",
                "--server.address=127.0.0.1",
                "--server.port=" + ports.get(id),
                "--spring.data.redis.host=" + proxy.host(),
                "--spring.data.redis.port=" + proxy.port(),
                "--spring.data.redis.timeout=1s",
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=1s",
                "--redlease.renew-interval=150ms",
                "--redlease.acquire-interval=200ms",
                "--spring.lifecycle.timeout-per-shutdown-phase=3s",
                "--management.endpoint.redlease.access=unrestricted",
                "--sample.report.build-time=600ms",
                // No fenced write while the JVM is cold: on a loaded machine its first round trips
                // can take most of the 1 s TTL, and a term won that late expires at once (its
                // write is refused, rightly, but the start would not be the healthy baseline).
                "--sample.report.initial-delay=4s",
                "--sample.slot-report.cron=*/2 * * * * *",
                "--logging.level.root=WARN",
                "--logging.level.io.redlease.samples.demo=INFO",
                "--logging.pattern.console=%level %m%n");
    }

    private String target(String id) {
        return "127.0.0.1:" + ports.get(id);
    }

    /** Evaluates an alert's expression, for this test's election, and returns its series. */
    private List<Sample> evaluate(String alert) {
        return prometheus.query(expressions.get(alert)).stream()
                .filter(sample -> name.equals(sample.label("name")))
                .toList();
    }

    private void assertEmpty(String... alerts) {
        for (String alert : alerts) {
            assertThat(evaluate(alert)).as(alert).isEmpty();
        }
    }

    /**
     * Every expression is empty; flapping while at most five terms were won. On a crowded machine a
     * cold JVM can stall past the 1 s TTL and lose a term it just won: such terms are real
     * leadership changes, and the flapping expression counts them (exactly, never more).
     */
    private void assertHealthy() {
        assertEmpty(
                ALERTS.stream().filter(alert -> !alert.equals(FLAPPING)).toArray(String[]::new));
        List<Event> won = elected();
        if (won.size() <= 5) {
            assertThat(evaluate(FLAPPING))
                    .as("RedleaseLeadershipFlapping after terms %s", won)
                    .isEmpty();
        }
    }

    private List<Event> elected() {
        return nodes.events().stream().filter(e -> e.kind().equals("elected")).toList();
    }

    /** Waits until Prometheus sees exactly this node leading, and the lease held. */
    private void awaitLeaderSeen(String id) {
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            assertThat(query("redlease_leader{name=\"" + name + "\"} == 1"))
                                    .as("up: %s", query("up"))
                                    .extracting(s -> s.label("instance"))
                                    .containsExactly(target(id));
                            assertThat(query("redlease:leaders:sum{name=\"" + name + "\"}"))
                                    .extracting(Sample::value)
                                    .containsExactly(1.0);
                            assertThat(query("redlease:lease_held:max{name=\"" + name + "\"}"))
                                    .extracting(Sample::value)
                                    .containsExactly(1.0);
                        });
    }

    private List<Sample> query(String promql) {
        return prometheus.query(promql);
    }

    private String awaitElected(long since, String... not) {
        List<String> excluded = List.of(not);
        return nodes.await(
                        after(since, "elected").and(event -> !excluded.contains(event.node())),
                        WAIT)
                .node();
    }

    private List<String> instances(List<Sample> samples) {
        return samples.stream().map(s -> s.label("instance")).toList();
    }

    @Test
    void everyAlertExpressionIsEmptyWhileHealthyAndFiresWhenItsConditionIsInduced()
            throws Exception {
        prometheus =
                PrometheusServer.start(
                        JOB,
                        ports.keySet().stream().map(this::target).toList(),
                        "/actuator/prometheus",
                        Duration.ofSeconds(1),
                        List.of(rules()));
        long begin = System.currentTimeMillis();
        ports.keySet().forEach(nodes::start);

        // Healthy: one leader, every instance scraped.
        String first = nodes.await(after(begin, "elected"), Duration.ofSeconds(90)).node();
        await().atMost(WAIT).until(() -> upTargets() == 3);
        awaitLeaderSeen(first);
        assertHealthy();

        // A graceful hand-off (SIGTERM), then a crash (SIGKILL): still healthy. The first leader
        // starts again meanwhile, so two instances are left after the crash.
        long handOff = System.currentTimeMillis();
        nodes.signal(first, "TERM");
        String second = awaitElected(handOff, first);
        awaitLeaderSeen(second);
        assertHealthy();
        await().atMost(WAIT).until(() -> !nodes.isAlive(first));
        nodes.start(first);
        long crash = System.currentTimeMillis();
        nodes.signal(second, "KILL");
        String third = awaitElected(crash, second);
        awaitLeaderSeen(third);
        assertHealthy();
        String follower = first.equals(third) ? remaining(first, second) : first;
        await().atMost(WAIT).until(() -> upTargets() == 2);

        // A stale writer: the leader freezes while building a report, past its lease; resumed, it
        // publishes with its old token and the fence refuses it.
        long freezing = System.currentTimeMillis();
        nodes.await(after(freezing, "building").and(e -> e.node().equals(third)), WAIT);
        nodes.signal(third, "STOP");
        long frozen = System.currentTimeMillis();
        String fourth = awaitElected(frozen, third);
        nodes.signal(third, "CONT");
        nodes.await(after(frozen, "rejected").and(e -> e.node().equals(third)), WAIT);
        await().atMost(WAIT)
                .untilAsserted(
                        () ->
                                assertThat(evaluate("RedleaseFencedWritesRefused"))
                                        .extracting(s -> s.label("job"), s -> s.label("store"))
                                        .containsExactly(tuple(JOB, "redis")));
        awaitLeaderSeen(fourth);
        // The frozen leader may rightly show in the per-instance alerts: its lease aged, and a
        // renewal in flight across the freeze counts from its send. The new leader does not.
        assertEmpty("RedleaseNoLeader", "RedleaseMultipleLeaders");
        assertThat(instances(evaluate("RedleaseLeaseNearExpiry"))).doesNotContain(target(fourth));
        assertThat(instances(evaluate("RedleaseRenewSlow"))).doesNotContain(target(fourth));

        // Slow renewals: the leader's link delays each direction by 200 ms, so its lease ages
        // past three quarters of the TTL before each renewal confirms it.
        TcpProxy slow = proxies.get(fourth);
        slow.delay(Duration.ofMillis(200));
        await().atMost(WAIT)
                .untilAsserted(
                        () ->
                                assertThat(instances(evaluate("RedleaseLeaseNearExpiry")))
                                        .contains(target(fourth)));
        slow.pass();
        // A renewal slower than half the TTL that still confirms the lease: the link holds
        // everything for 650 ms, so the renewal in flight takes 500-650 ms and confirms at a lease
        // age of at most 800 ms. (A link slower than half the TTL for good loses the lease: the
        // next
        // renewal is sent only after the previous reply.) Repeated until a scrape has seen it.
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(
                        () -> {
                            slow.blackhole();
                            Thread.sleep(650); // the length of the fault, not a wait for a state
                            slow.pass();
                            assertThat(instances(evaluate("RedleaseRenewSlow")))
                                    .contains(target(fourth));
                        });

        // No leader: Redis is paused; leaders step down, followers' looks fail, and after three
        // TTLs without any instance seeing the lease held the expression returns the election.
        await().atMost(WAIT)
                .until(
                        () ->
                                query("redlease:lease_held:max{name=\"" + name + "\"} == 1").size()
                                        == 1);
        assertEmpty("RedleaseNoLeader");
        redis.pause();
        await().atMost(WAIT)
                .untilAsserted(
                        () ->
                                assertThat(evaluate("RedleaseNoLeader"))
                                        .singleElement()
                                        .satisfies(s -> assertThat(s.value()).isGreaterThan(3.0)));
        long resumed = System.currentTimeMillis();
        redis.resume();
        String fifth = awaitElected(resumed);
        awaitLeaderSeen(fifth);
        await().atMost(WAIT).until(() -> evaluate("RedleaseNoLeader").isEmpty());

        // A split brain: the follower's link moves to the other Redis server, which has no lease;
        // it leads there while the election's leader leads on the first: two report leading.
        String split = fifth.equals(third) ? follower : third;
        assertEmpty("RedleaseMultipleLeaders");
        proxies.get(split).forwardTo(other);
        await().atMost(WAIT)
                .untilAsserted(
                        () ->
                                assertThat(evaluate("RedleaseMultipleLeaders"))
                                        .singleElement()
                                        .satisfies(s -> assertThat(s.value()).isEqualTo(2.0)));

        // The split ends: back on the first server, the node finds the lease taken.
        proxies.get(split).forwardTo(redis);
        awaitLeaderSeen(fifth);

        // The churn: more than five terms won in the window. Each term Prometheus saw counts once
        // and no more (a term won and lost between two scrapes of a restarted node may not be
        // seen), so the leader resigns until the count passes five.
        String leader = fifth;
        for (int handOffs = 0; handOffs < 6 && evaluate(FLAPPING).isEmpty(); handOffs++) {
            double seen = termsSeen();
            long resigned = System.currentTimeMillis();
            resign(leader);
            leader = awaitElected(resigned);
            awaitLeaderSeen(leader);
            // A scrape has seen a count rise: one more term for the expression.
            await().atMost(WAIT).until(() -> termsSeen() > seen);
        }
        List<Sample> flapping = evaluate(FLAPPING);
        List<Event> elected = elected();
        assertThat(flapping)
                .as("terms won %s", elected)
                .singleElement()
                .satisfies(
                        s ->
                                assertThat(s.value())
                                        .isGreaterThan(5.0)
                                        .isLessThanOrEqualTo(elected.size()));
    }

    /** Returns the terms won, summed over the instances Prometheus scrapes. */
    private double termsSeen() {
        return query("sum(redlease_elections_terms_total{name=\"" + name + "\"})").stream()
                .mapToDouble(Sample::value)
                .sum();
    }

    /** Resigns a node's leadership through the endpoint. */
    private void resign(String id) throws IOException, InterruptedException {
        HttpResponse<String> response =
                http.send(
                        HttpRequest.newBuilder(
                                        URI.create("http://" + target(id) + "/actuator/redlease"))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                                .timeout(WAIT)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    }

    /** Returns the node that is neither of the two. */
    private String remaining(String one, String two) {
        return ports.keySet().stream()
                .filter(id -> !id.equals(one) && !id.equals(two))
                .findFirst()
                .orElseThrow();
    }

    private int upTargets() {
        return query("up{job=\"" + JOB + "\"} == 1").size();
    }
}
