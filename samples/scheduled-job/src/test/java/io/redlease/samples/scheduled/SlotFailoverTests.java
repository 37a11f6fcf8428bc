package io.redlease.samples.scheduled;

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
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The slot report across real failovers: three copies of the sample in their own JVMs, their
 * scheduler clocks skewed (0, +300 ms, -400 ms), a cron slot every second; a graceful hand-off
 * (SIGTERM), a crash in the middle of a run (SIGKILL) and a leader frozen in the middle of a run
 * past its lease (SIGSTOP, then SIGCONT). Every slot of the window completes exactly once, none
 * runs again after it completed, and the frozen leader cannot mark its slot.
 */
@ExtendWith(RedisExtension.class)
class SlotFailoverTests {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final Map<String, Duration> skews =
            Map.of("a", Duration.ZERO, "b", Duration.ofMillis(300), "c", Duration.ofMillis(-400));

    private RedisServer server;

    private String name;

    private LettuceConnectionFactory factory;

    private StringRedisTemplate redis;

    private AppNodes nodes;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{slots-" + System.nanoTime() + "}";
        this.factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        this.redis = new StringRedisTemplate(factory);
        this.nodes =
                new AppNodes(
                        ScheduledJobApplication.class,
                        this::arguments,
                        Path.of("target", "slot-failover-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        nodes.close();
        factory.destroy();
    }

    private static boolean completes(Event event) {
        return event.kind().equals("slot-run") || event.kind().equals("slot-caught-up");
    }

    private List<String> arguments(String id) {
        return List.of(
                "--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off",
                "--spring.data.redis.host=" + server.host(),
                "--spring.data.redis.port=" + server.port(),
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=1s",
                "--redlease.renew-interval=150ms",
                "--redlease.acquire-interval=200ms",
                "--redlease.scheduling.missed-slots=RUN_ALL",
                // Every slot of the window is checked, so none may be dropped for falling behind:
                // on a loaded machine a successor's JVM has taken over 10 s (10 slots) to win.
                "--redlease.scheduling.max-catch-up=300",
                "--spring.task.scheduling.pool.size=2",
                "--spring.lifecycle.timeout-per-shutdown-phase=5s",
                "--sample.slot-report.cron=* * * * * *",
                "--sample.slot-report.build-time=600ms",
                "--sample.report.build-time=10ms",
                "--sample.clock-skew=" + skews.get(id).toMillis() + "ms",
                "--logging.level.root=WARN",
                "--logging.level.io.redlease.samples.demo=INFO",
                "--logging.pattern.console=%level %m%n");
    }

    private Event awaitEvent(Predicate<Event> condition) {
        return nodes.await(condition, WAIT);
    }

    /**
     * Waits for the leader after the time, other than the given node: the node that completes a
     * slot (a cold JVM's first term can end before its first run, so "elected" alone does not
     * tell).
     */
    private String awaitLeader(long since, String other) {
        return awaitEvent(
                        event ->
                                completes(event)
                                        && event.time() >= since
                                        && !event.node().equals(other))
                .node();
    }

    /** Waits until the node has completed two slots after the time. */
    private void awaitCompletions(String node, long since) {
        await().atMost(WAIT)
                .until(
                        () ->
                                nodes.events().stream()
                                                .filter(SlotFailoverTests::completes)
                                                .filter(event -> event.node().equals(node))
                                                .filter(event -> event.time() >= since)
                                                .count()
                                        >= 2);
    }

    @Test
    void everySlotCompletesOnceAcrossAHandOffACrashAndAFreeze() throws Exception {
        long begin = System.currentTimeMillis();
        skews.keySet().stream().sorted().forEach(nodes::start);
        String first = awaitLeader(begin, "");
        awaitCompletions(first, begin);

        // A graceful hand-off: SIGTERM to the leader.
        long stopped = System.currentTimeMillis();
        nodes.signal(first, "TERM");
        String second = awaitLeader(stopped, first);
        await().atMost(WAIT).until(() -> !nodes.isAlive(first));
        nodes.start(first);
        awaitCompletions(second, stopped);

        // A crash in the middle of a run: SIGKILL once the leader starts a slot.
        long crashing = System.currentTimeMillis();
        awaitEvent(after(crashing, "slot-start").and(event -> event.node().equals(second)));
        nodes.signal(second, "KILL");
        long killed = System.currentTimeMillis();
        String third = awaitLeader(killed, second);
        nodes.start(second);
        awaitCompletions(third, killed);

        // A freeze in the middle of a run, past the lease: the run outlives its term.
        long freezing = System.currentTimeMillis();
        Event frozenRun =
                awaitEvent(after(freezing, "slot-start").and(event -> event.node().equals(third)));
        nodes.signal(third, "STOP");
        long frozen = System.currentTimeMillis();
        String fourth = awaitLeader(frozen, third);
        long staleSlot = frozenRun.slot();
        awaitEvent(
                event ->
                        completes(event)
                                && event.node().equals(fourth)
                                && event.slot() == staleSlot);
        nodes.signal(third, "CONT");
        // Resumed, it finishes the run, but its mark is refused: the slot stays the successor's.
        awaitEvent(
                event ->
                        event.kind().equals("slot-failed")
                                && event.node().equals(third)
                                && event.slot() == staleSlot);
        awaitCompletions(fourth, System.currentTimeMillis());
        Map<Object, Object> ledger = redis.opsForHash().entries(name + ":slots:slotReport.report");
        assertThat(Long.parseLong((String) ledger.get("slot"))).isGreaterThan(staleSlot);
        nodes.killAll();

        List<Event> completions =
                nodes.events().stream().filter(SlotFailoverTests::completes).toList();
        Map<Long, List<Event>> bySlot =
                completions.stream()
                        .collect(
                                Collectors.groupingBy(
                                        Event::slot, TreeMap::new, Collectors.toList()));
        // Every slot of the window completed exactly once...
        assertThat(bySlot.values())
                .as("completions by slot %s", bySlot)
                .allSatisfy(same -> assertThat(same).hasSize(1));
        List<Long> slots = new ArrayList<>(bySlot.keySet());
        for (int i = 1; i < slots.size(); i++) {
            assertThat(slots.get(i) - slots.get(i - 1)).as("slots %s", slots).isEqualTo(1000);
        }
        // ...and no run of a slot started after the slot had completed (runs still going when
        // the nodes were stopped aside).
        long lastCompleted = slots.get(slots.size() - 1);
        for (Event start :
                nodes.events().stream().filter(e -> e.kind().equals("slot-start")).toList()) {
            if (start.slot() > lastCompleted) {
                continue;
            }
            assertThat(bySlot).as("a completion of %s", start).containsKey(start.slot());
            Event done = bySlot.get(start.slot()).get(0);
            assertThat(start.time())
                    .as("%s after %s", start, done)
                    .isLessThanOrEqualTo(done.time());
        }
        // One report per slot, and the stale slot's is the successor's: the resumed leader's run
        // wrote none (interrupted at its step-down, or its write refused by the fence).
        List<String> reports = redis.opsForList().range(name + ":slot-reports", 0, -1);
        List<String> reportedSlots = reports.stream().map(entry -> entry.split(":")[0]).toList();
        assertThat(reportedSlots).doesNotHaveDuplicates();
        assertThat(reports)
                .filteredOn(entry -> entry.startsWith(staleSlot + ":"))
                .singleElement()
                .satisfies(entry -> assertThat(entry).contains(":" + fourth + ":"));
    }
}
