package io.redlease.samples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
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

    private final Collection<Event> events = new ConcurrentLinkedQueue<>();

    private final Map<String, Process> nodes = new LinkedHashMap<>();

    private final Map<String, Duration> skews =
            Map.of("a", Duration.ZERO, "b", Duration.ofMillis(300), "c", Duration.ofMillis(-400));

    private RedisServer server;

    private String name;

    private LettuceConnectionFactory factory;

    private StringRedisTemplate redis;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{slots-" + System.nanoTime() + "}";
        this.factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        this.redis = new StringRedisTemplate(factory);
    }

    @AfterEach
    void tearDown() throws IOException {
        nodes.values().forEach(Process::destroyForcibly);
        factory.destroy();
        // The event log, for reading a failure.
        java.nio.file.Files.write(
                Path.of("target", "slot-failover-events.txt"),
                events.stream().map(Event::toString).toList());
    }

    /** One line of a node's event log: {@code DEMO|<epoch ms>|<node>|<kind>|k=v k=v}. */
    record Event(long time, String node, String kind, Map<String, String> details) {

        long slot() {
            return Long.parseLong(details.get("slot"));
        }

        boolean completes() {
            return kind.equals("slot-run") || kind.equals("slot-caught-up");
        }
    }

    private void start(String id) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command =
                List.of(
                        java,
                        "-Xmx256m",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        classpath,
                        ScheduledJobApplication.class.getName(),
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
                        "--spring.task.scheduling.pool.size=2",
                        "--spring.lifecycle.timeout-per-shutdown-phase=5s",
                        "--sample.slot-report.cron=* * * * * *",
                        "--sample.slot-report.build-time=600ms",
                        "--sample.report.build-time=10ms",
                        "--sample.clock-skew=" + skews.get(id).toMillis() + "ms",
                        "--logging.level.root=WARN",
                        "--logging.level.io.redlease.samples.demo=INFO",
                        "--logging.pattern.console=%level %m%n");
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        nodes.put(id, process);
        Thread reader = new Thread(() -> read(id, process), "node-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(String id, Process process) {
        try (BufferedReader lines =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                int at = line.indexOf("DEMO|");
                if (at < 0) {
                    continue;
                }
                String[] parts = line.substring(at).split("\\|", -1);
                Map<String, String> details = new LinkedHashMap<>();
                for (String pair : parts[4].trim().split(" ")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        details.put(pair.substring(0, eq), pair.substring(eq + 1));
                    }
                }
                events.add(new Event(Long.parseLong(parts[1]), parts[2], parts[3], details));
            }
        } catch (IOException ex) {
            // The node ended.
        }
    }

    private void signal(String id, String signal) throws Exception {
        Process kill =
                new ProcessBuilder("kill", "-" + signal, Long.toString(nodes.get(id).pid()))
                        .start();
        assertThat(kill.waitFor()).isZero();
    }

    private Event awaitEvent(Predicate<Event> condition) {
        await().atMost(WAIT).until(() -> events.stream().anyMatch(condition));
        return events.stream().filter(condition).findFirst().orElseThrow();
    }

    private static Predicate<Event> after(long time, String kind) {
        return event -> event.time() >= time && event.kind().equals(kind);
    }

    /** Waits for a leader elected at or after the time, other than the given node. */
    private String awaitLeader(long since, String other) {
        return awaitEvent(after(since, "elected").and(event -> !event.node().equals(other))).node();
    }

    /** Waits until the node has completed two slots after the time. */
    private void awaitCompletions(String node, long since) {
        await().atMost(WAIT)
                .until(
                        () ->
                                events.stream()
                                                .filter(Event::completes)
                                                .filter(event -> event.node().equals(node))
                                                .filter(event -> event.time() >= since)
                                                .count()
                                        >= 2);
    }

    @Test
    void everySlotCompletesOnceAcrossAHandOffACrashAndAFreeze() throws Exception {
        long begin = System.currentTimeMillis();
        skews.keySet().stream().sorted().forEach(this::start);
        String first = awaitLeader(begin, "");
        awaitCompletions(first, begin);

        // A graceful hand-off: SIGTERM to the leader.
        long stopped = System.currentTimeMillis();
        signal(first, "TERM");
        String second = awaitLeader(stopped, first);
        await().atMost(WAIT).until(() -> !nodes.get(first).isAlive());
        start(first);
        awaitCompletions(second, stopped);

        // A crash in the middle of a run: SIGKILL once the leader starts a slot.
        long crashing = System.currentTimeMillis();
        awaitEvent(after(crashing, "slot-start").and(event -> event.node().equals(second)));
        signal(second, "KILL");
        long killed = System.currentTimeMillis();
        String third = awaitLeader(killed, second);
        start(second);
        awaitCompletions(third, killed);

        // A freeze in the middle of a run, past the lease: the run outlives its term.
        long freezing = System.currentTimeMillis();
        Event frozenRun =
                awaitEvent(after(freezing, "slot-start").and(event -> event.node().equals(third)));
        signal(third, "STOP");
        long frozen = System.currentTimeMillis();
        String fourth = awaitLeader(frozen, third);
        long staleSlot = frozenRun.slot();
        awaitEvent(
                event ->
                        event.completes()
                                && event.node().equals(fourth)
                                && event.slot() == staleSlot);
        signal(third, "CONT");
        // Resumed, it finishes the run, but its mark is refused: the slot stays the successor's.
        awaitEvent(
                event ->
                        event.kind().equals("slot-failed")
                                && event.node().equals(third)
                                && event.slot() == staleSlot);
        awaitCompletions(fourth, System.currentTimeMillis());
        Map<Object, Object> ledger = redis.opsForHash().entries(name + ":slots:slotReport.report");
        assertThat(Long.parseLong((String) ledger.get("slot"))).isGreaterThan(staleSlot);
        nodes.values().forEach(Process::destroyForcibly);

        List<Event> completions = events.stream().filter(Event::completes).toList();
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
        for (Event start : events.stream().filter(e -> e.kind().equals("slot-start")).toList()) {
            if (start.slot() > lastCompleted) {
                continue;
            }
            assertThat(bySlot).as("a completion of %s", start).containsKey(start.slot());
            Event done = bySlot.get(start.slot()).get(0);
            assertThat(start.time())
                    .as("%s after %s", start, done)
                    .isLessThanOrEqualTo(done.time());
        }
        // The fenced reports hold one report per slot: the frozen leader's late one was refused.
        List<String> reports = redis.opsForList().range(name + ":slot-reports", 0, -1);
        List<String> reportedSlots = reports.stream().map(entry -> entry.split(":")[0]).toList();
        assertThat(reportedSlots).doesNotHaveDuplicates();
        assertThat(reports)
                .filteredOn(entry -> entry.startsWith(staleSlot + ":"))
                .singleElement()
                .satisfies(entry -> assertThat(entry).contains(":" + fourth + ":"));
    }
}
