package io.redlease.samples.reactive;

import static io.redlease.test.AppNodes.after;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The reactive slot report across real failovers: three copies of the sample in their own JVMs, a
 * cron slot every second, a graceful hand-off (SIGTERM) and a crash in the middle of a run
 * (SIGKILL). Every slot of the window completes exactly once, and the fenced reports hold one per
 * slot.
 */
@ExtendWith(RedisExtension.class)
class ReactiveSlotFailoverTests {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private RedisServer server;

    private String name;

    private LettuceConnectionFactory factory;

    private StringRedisTemplate redis;

    private AppNodes nodes;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{reactive-slots-" + System.nanoTime() + "}";
        this.factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        this.redis = new StringRedisTemplate(factory);
        this.nodes =
                new AppNodes(
                        ReactiveJobApplication.class,
                        this::arguments,
                        Path.of("target", "reactive-slot-failover-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        nodes.close();
        factory.destroy();
    }

    private List<String> arguments(String id) {
        return List.of(
                "--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off",
                "--spring.data.redis.url=" + server.url(),
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=1s",
                "--redlease.renew-interval=150ms",
                "--redlease.acquire-interval=200ms",
                "--redlease.scheduling.missed-slots=RUN_ALL",
                "--spring.lifecycle.timeout-per-shutdown-phase=5s",
                "--sample.slot-report.cron=* * * * * *",
                "--sample.slot-report.build-time=600ms",
                "--logging.level.root=WARN",
                "--logging.level.io.redlease.samples.demo=INFO",
                "--logging.pattern.console=%level %m%n");
    }

    private static boolean completes(Event event) {
        return event.kind().equals("slot-run") || event.kind().equals("slot-caught-up");
    }

    /**
     * Waits for the leader after the time, other than the given node: the node that completes a
     * slot (a cold JVM's first term can end before its first run, so "elected" alone does not
     * tell).
     */
    private String awaitLeader(long since, String other) {
        return nodes.await(
                        event ->
                                completes(event)
                                        && event.time() >= since
                                        && !event.node().equals(other),
                        WAIT)
                .node();
    }

    private void awaitCompletions(String node, long since) {
        await().atMost(WAIT)
                .until(
                        () ->
                                nodes.events().stream()
                                                .filter(ReactiveSlotFailoverTests::completes)
                                                .filter(event -> event.node().equals(node))
                                                .filter(event -> event.time() >= since)
                                                .count()
                                        >= 2);
    }

    @Test
    void everySlotCompletesOnceAcrossAHandOffAndACrash() throws Exception {
        long begin = System.currentTimeMillis();
        List.of("a", "b", "c").forEach(nodes::start);
        String first = awaitLeader(begin, "");
        awaitCompletions(first, begin);

        long stopped = System.currentTimeMillis();
        nodes.signal(first, "TERM");
        String second = awaitLeader(stopped, first);
        await().atMost(WAIT).until(() -> !nodes.isAlive(first));
        nodes.start(first);
        awaitCompletions(second, stopped);

        // A crash in the middle of a run: its slot is caught up by the successor.
        long crashing = System.currentTimeMillis();
        Event crashed =
                nodes.await(
                        after(crashing, "slot-start").and(event -> event.node().equals(second)),
                        WAIT);
        nodes.signal(second, "KILL");
        long killed = System.currentTimeMillis();
        String third = awaitLeader(killed, second);
        nodes.await(
                event ->
                        completes(event)
                                && event.node().equals(third)
                                && event.slot() == crashed.slot(),
                WAIT);
        awaitCompletions(third, System.currentTimeMillis());
        nodes.killAll();

        Map<Long, List<Event>> bySlot =
                nodes.events().stream()
                        .filter(ReactiveSlotFailoverTests::completes)
                        .collect(
                                Collectors.groupingBy(
                                        Event::slot, TreeMap::new, Collectors.toList()));
        assertThat(bySlot.values())
                .as("completions by slot %s", bySlot)
                .allSatisfy(same -> assertThat(same).hasSize(1));
        List<Long> slots = new ArrayList<>(bySlot.keySet());
        for (int i = 1; i < slots.size(); i++) {
            assertThat(slots.get(i) - slots.get(i - 1)).as("slots %s", slots).isEqualTo(1000);
        }
        List<String> reports = redis.opsForList().range(name + ":slot-reports", 0, -1);
        assertThat(reports.stream().map(entry -> entry.split(":")[0])).doesNotHaveDuplicates();
        assertThat(reports)
                .filteredOn(entry -> entry.startsWith(crashed.slot() + ":"))
                .singleElement()
                .satisfies(entry -> assertThat(entry).contains(":" + third + ":"));
    }
}
