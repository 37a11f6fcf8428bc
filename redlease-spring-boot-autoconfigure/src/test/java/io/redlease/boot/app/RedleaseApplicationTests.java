package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.boot.event.LeadershipRevokedEvent;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elector;
import io.redlease.core.StepDownReason;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Three instances of one application in this JVM, sharing one election on a real Redis: exactly one
 * runs the leader-only job at a time (shown by the fenced log, not by timing), and leadership moves
 * on shutdown, on a stolen lease and on resignation.
 */
@ExtendWith(RedisExtension.class)
class RedleaseApplicationTests {

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private final List<Object> events = new CopyOnWriteArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-app-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "management.endpoints.web.exposure.include=health,redlease",
                                "management.endpoint.redlease.access=unrestricted",
                                "management.endpoint.health.show-details=always"));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .listeners((ApplicationListener<LeadershipGrantedEvent>) events::add)
                        .listeners((ApplicationListener<LeadershipRevokedEvent>) events::add)
                        .run();
        instances.add(context);
        return context;
    }

    private static Elector elector(ConfigurableApplicationContext context) {
        return context.getBean(Elector.class);
    }

    private Optional<ConfigurableApplicationContext> leader() {
        return instances.stream()
                .filter(ConfigurableApplicationContext::isActive)
                .filter(c -> elector(c).isLeader())
                .findFirst();
    }

    private List<String[]> log() {
        @SuppressWarnings("unchecked")
        List<Object> entries = (List<Object>) server.command("LRANGE", name + ":log", "0", "-1");
        return entries.stream().map(entry -> ((String) entry).split(":")).toList();
    }

    /**
     * The fenced log shows one writer per term: tokens never go down, each token was written by one
     * instance, and sequence numbers have no gaps.
     */
    private void assertOneWriterPerTerm() {
        List<String[]> log = log();
        assertThat(log).isNotEmpty();
        Map<Long, String> writerOfToken = new HashMap<>();
        long lastToken = 0;
        long expectedSeq = 1;
        for (String[] entry : log) {
            long token = Long.parseLong(entry[0]);
            assertThat(token).isGreaterThanOrEqualTo(lastToken);
            String previous = writerOfToken.putIfAbsent(token, entry[1]);
            assertThat(previous == null || previous.equals(entry[1]))
                    .as("token %d written by %s and %s", token, previous, entry[1])
                    .isTrue();
            assertThat(Long.parseLong(entry[2])).isEqualTo(expectedSeq++);
            lastToken = token;
        }
    }

    private long entriesBy(String instanceId) {
        return log().stream().filter(entry -> entry[1].equals(instanceId)).count();
    }

    @Test
    void exactlyOneInstanceRunsTheJobAndShutdownHandsItOver() {
        instance("a");
        instance("b");
        instance("c");
        ConfigurableApplicationContext first =
                await().until(this::leader, Optional::isPresent).orElseThrow();
        String firstId = elector(first).instanceId();
        await().until(() -> entriesBy(firstId) >= 20);

        long closing = System.nanoTime();
        first.close();
        ConfigurableApplicationContext second =
                await().until(this::leader, Optional::isPresent).orElseThrow();
        Duration handOver = Duration.ofNanos(System.nanoTime() - closing);
        // Graceful: the release is announced, so well within TTL + acquire interval.
        assertThat(handOver).isLessThan(Duration.ofMillis(1200));
        String secondId = elector(second).instanceId();
        assertThat(secondId).isNotEqualTo(firstId);
        long before = entriesBy(firstId);
        await().until(() -> entriesBy(secondId) >= 20);
        assertThat(entriesBy(firstId)).isEqualTo(before);
        assertOneWriterPerTerm();
        assertThat(events)
                .anySatisfy(
                        event ->
                                assertThat(event)
                                        .isInstanceOfSatisfying(
                                                LeadershipRevokedEvent.class,
                                                revoked ->
                                                        assertThat(revoked.getReason())
                                                                .isEqualTo(
                                                                        StepDownReason.SHUTDOWN)));
    }

    @Test
    void aLeaderWhoseLeaseIsStolenStopsAndItsCallIsInterrupted() {
        ConfigurableApplicationContext a = instance("a", "test.dwell-millis=60000");
        await().until(() -> elector(a).isLeader());
        await().until(() -> entriesBy("a") >= 1);
        server.command("SET", name + ":leader", "thief", "PX", "3600000");
        await().until(
                        () ->
                                SequenceJob.interrupted
                                                .getOrDefault(
                                                        "a",
                                                        new java.util.concurrent.atomic
                                                                .AtomicInteger())
                                                .get()
                                        >= 1);
        assertThat(elector(a).isLeader()).isFalse();
        long entries = entriesBy("a");
        // It keeps following: its scheduled calls are skipped, so nothing more is written.
        await().pollDelay(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> true);
        assertThat(entriesBy("a")).isEqualTo(entries);
        assertThat(server.command("GET", name + ":leader")).isEqualTo("thief");
    }

    @Test
    void metricsAndHealthReportEachInstancesRole() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> elector(a).isLeader());
        ConfigurableApplicationContext b = instance("b");
        await().until(() -> elector(b).isRunning());
        for (ConfigurableApplicationContext context : List.of(a, b)) {
            boolean leads = context == a;
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            await().until(
                            () ->
                                    registry.find(RedleaseMetrics.LEADER).tag("name", name).gauge()
                                            != null);
            assertThat(registry.get(RedleaseMetrics.LEADER).tag("name", name).gauge().value())
                    .isEqualTo(leads ? 1.0 : 0.0);
            assertThat(
                            registry.get(RedleaseMetrics.ELECTIONS)
                                    .tag("name", name)
                                    .functionCounter()
                                    .count())
                    .isEqualTo(leads ? 1.0 : 0.0);
            Health health = context.getBean(RedleaseHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            @SuppressWarnings("unchecked")
            Map<String, Object> main = (Map<String, Object>) health.getDetails().get("default");
            assertThat(main)
                    .containsEntry("role", leads ? "leader" : "follower")
                    .containsEntry("name", name);
            assertThat(main.containsKey("token")).isEqualTo(leads);
        }
        await().until(
                        () ->
                                a.getBean(MeterRegistry.class)
                                                .get(RedleaseMetrics.FENCE_WRITES)
                                                .tag("result", "applied")
                                                .tag("store", "redis")
                                                .functionCounter()
                                                .count()
                                        > 0);
        // Timers: the leader's renewals and fenced writes, the follower's acquires.
        MeterRegistry leader = a.getBean(MeterRegistry.class);
        MeterRegistry follower = b.getBean(MeterRegistry.class);
        await().until(() -> calls(leader, "renew", "success") > 0);
        await().until(() -> calls(leader, "fenced-write", "applied") > 0);
        await().until(() -> calls(follower, "acquire", "success") > 0);
        assertThat(
                        leader.get(RedleaseMetrics.REDIS_CALLS)
                                .tag("name", name)
                                .tag("operation", "renew")
                                .tag("outcome", "success")
                                .timer()
                                .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS))
                .isPositive();
    }

    private long calls(MeterRegistry registry, String operation, String outcome) {
        return registry.get(RedleaseMetrics.REDIS_CALLS)
                .tag("name", name)
                .tag("operation", operation)
                .tag("outcome", outcome)
                .timer()
                .count();
    }

    @Test
    void theEndpointShowsTheHolderAndItsResignHandsLeadershipOver() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> elector(a).isLeader());
        ConfigurableApplicationContext b = instance("b");
        await().until(() -> elector(b).isRunning());
        RedleaseEndpoint endpoint = b.getBean(RedleaseEndpoint.class);
        RedleaseEndpoint.ElectionDescriptor seenFromB = endpoint.election("default");
        assertThat(seenFromB.role()).isEqualTo("follower");
        assertThat(seenFromB.holder()).isEqualTo("a");
        assertThat(seenFromB.leaseMillisLeft()).isPositive().isLessThanOrEqualTo(1000);
        assertThat(seenFromB.token()).isNull();

        RedleaseEndpoint.ElectionDescriptor resigned =
                a.getBean(RedleaseEndpoint.class).resign(null);
        assertThat(resigned.instanceId()).isEqualTo("a");
        await().until(() -> elector(b).isLeader());
        assertThat(endpoint.elections().get("default").role()).isEqualTo("leader");
        assertThat(endpoint.elections().get("default").holder()).isEqualTo("b");
    }
}
