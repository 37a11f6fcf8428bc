package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Hostile probes of once-per-slot jobs on Boot paths the other application tests do not take. A
 * test that fails here shows a break of the guarantee, and asserts the behaviour that would hold
 * it.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotHostileApplicationTests {

    /** Every run of a job's body: instance, the slot it saw (null if none), and when it ran. */
    static final Collection<Run> RUNS = new ConcurrentLinkedQueue<>();

    record Run(String instance, Instant slot, Instant second) {}

    /** The application: redlease's auto-configuration, and nothing scheduled of its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ParentApplication {}

    /**
     * A child context of the application, with its own auto-configuration and scheduling, as a
     * module or a second dispatcher has.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class ChildModule {

        @Bean
        ChildReport childReport(
                LeadershipContext leadership, @Value("${redlease.instance-id}") String instance) {
            return new ChildReport(leadership, instance);
        }
    }

    static class ChildReport {

        private final LeadershipContext leadership;

        private final String instance;

        ChildReport(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void everySecond() {
            RUNS.add(
                    new Run(
                            instance,
                            leadership.slot().map(slot -> slot.time()).orElse(null),
                            Instant.now().truncatedTo(ChronoUnit.SECONDS)));
        }
    }

    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-slot-hostile:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        RUNS.clear();
    }

    @AfterEach
    void tearDown() {
        for (int i = contexts.size() - 1; i >= 0; i--) {
            contexts.get(i).close();
        }
    }

    private ConfigurableApplicationContext childOf(String id) {
        SpringApplicationBuilder parent =
                new SpringApplicationBuilder(ParentApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s");
        ConfigurableApplicationContext child =
                parent.child(ChildModule.class).web(WebApplicationType.NONE).run();
        contexts.add(child.getParent() instanceof ConfigurableApplicationContext p ? p : child);
        contexts.add(child);
        return child;
    }

    @Test
    void aOncePerSlotJobInAChildContextRunsEachSlotOnceOrIsRefused() {
        Throwable failure = catchThrowable(() -> childOf("a"));
        if (failure == null) {
            failure = catchThrowable(() -> childOf("b"));
        }
        if (failure != null) {
            assertThat(failure).hasStackTraceContaining("ChildReport.everySecond");
            return;
        }
        // Both instances are up: count from here, until five seconds have had their slot run.
        RUNS.clear();
        await().atMost(Duration.ofSeconds(15))
                .until(() -> RUNS.stream().map(Run::second).distinct().count() >= 5);
        Map<Instant, List<Run>> bySecond =
                RUNS.stream()
                        .collect(
                                Collectors.groupingBy(
                                        Run::second, TreeMap::new, Collectors.toList()));
        assertThat(bySecond.values())
                .as(
                        "runs of a once-per-slot job declared in a child context, on two instances"
                                + " of which one leads, by second: %s",
                        bySecond)
                .allSatisfy(runs -> assertThat(runs).hasSize(1));
    }

    /** An application with one once-per-slot cron job on the main election. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SlotApplication {

        @Bean
        ChildReport report(
                LeadershipContext leadership, @Value("${redlease.instance-id}") String instance) {
            return new ChildReport(leadership, instance);
        }
    }

    private static String causes(Throwable failure) {
        StringBuilder causes = new StringBuilder();
        for (Throwable at = failure; at != null; at = at.getCause()) {
            causes.append(causes.isEmpty() ? "" : " <- ").append(at);
        }
        return causes.toString();
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void slotsRunOnceWithoutGapsAcrossAContextStopAndStart() {
        ConfigurableApplicationContext a =
                new SpringApplicationBuilder(SlotApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=a",
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.scheduling.missed-slots=RUN_ALL",
                                "spring.task.scheduling.pool.size=2",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s")
                        .run();
        contexts.add(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 2);
        a.stop();
        int before = RUNS.size();
        a.start();
        // A bounded window: a leader runs a slot every second, and catches up what the stop missed.
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (RUNS.size() < before + 4 && System.nanoTime() < deadline) {
            sleep(Duration.ofMillis(50));
        }
        Elector elector = a.getBean(Elections.class).get(Elections.DEFAULT);
        assertThat(RUNS.size() - before)
                .as(
                        "slots run in 15 s after the context's stop() and start(); the elector:"
                                + " running %s, leader %s, holder of the lease %s, last Redis"
                                + " failure %s",
                        elector.isRunning(),
                        elector.isLeader(),
                        elector.holder(),
                        elector.redisFailure().map(OncePerSlotHostileApplicationTests::causes))
                .isGreaterThanOrEqualTo(4);
        List<Run> runs = List.copyOf(RUNS);
        assertThat(runs).as("runs %s", runs).allSatisfy(run -> assertThat(run.slot()).isNotNull());
        List<Instant> slots = runs.stream().map(Run::slot).sorted().toList();
        assertThat(slots).as("slots %s", slots).doesNotHaveDuplicates();
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .as("slots %s", slots)
                    .isEqualTo(Duration.ofSeconds(1));
        }
    }

    // Boot starts the elections in a lifecycle phase below the web server's: an application whose
    // later lifecycle beans take a while to start (a web server) wins its election before
    // Spring schedules its @Scheduled methods.

    /** Every run of the five-second job: its slot, whether a catch-up, and when it ran. */
    static final Collection<Slot> CAUGHT = new ConcurrentLinkedQueue<>();

    /** When the slow lifecycle bean saw its instance lead. */
    static volatile Instant electedAt;

    static class FiveSecondReport {

        private final LeadershipContext leadership;

        FiveSecondReport(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(cron = "*/5 * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            CAUGHT.add(leadership.slot().orElseThrow());
        }
    }

    /**
     * Starts after the elections and before the scheduler (as a listener registry or any lifecycle
     * of a phase between theirs would) and takes its time.
     */
    static class SlowStart implements SmartLifecycle {

        private final Elections elections;

        private volatile boolean running;

        SlowStart(Elections elections) {
            this.elections = elections;
        }

        @Override
        public void start() {
            Elector elector = elections.get(Elections.DEFAULT);
            await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
            electedAt = Instant.now();
            // The election's observers run on its callback lane right after the term starts: a
            // moment for them to run while this bean is still starting.
            sleep(Duration.ofMillis(500));
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            // Above the elections' phase (DEFAULT_PHASE - 512), below the scheduler's.
            return SmartLifecycle.DEFAULT_PHASE - 256;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SlowStartingApplication {

        @Bean
        FiveSecondReport report(LeadershipContext leadership) {
            return new FiveSecondReport(leadership);
        }

        @Bean
        SlowStart slowStart(Elections elections) {
            return new SlowStart(elections);
        }
    }

    @Test
    void runLatestRunsTheMostRecentMissedSlotRightAfterAnElectionWonBeforeTheSchedulesExist()
            throws Exception {
        CAUGHT.clear();
        // The job last completed a slot a minute ago: every slot since then was missed.
        long lastMinute = (System.currentTimeMillis() - 60_000) / 5_000 * 5_000;
        try (io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(server.url());
                var connection = client.connect()) {
            connection
                    .sync()
                    .hset(
                            name + ":slots:report.job",
                            Map.of(
                                    "slot", Long.toString(lastMinute),
                                    "completed", Long.toString(lastMinute),
                                    "since", Long.toString(lastMinute - 60_000)));
        }
        ConfigurableApplicationContext a =
                new SpringApplicationBuilder(SlowStartingApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=a",
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s")
                        .run();
        contexts.add(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> !CAUGHT.isEmpty());
        Slot first = CAUGHT.iterator().next();
        assertThat(first.time())
                .as(
                        "the first slot run after the election at %s (RUN_LATEST: the most recent"
                                + " missed slot, right after election); runs %s",
                        electedAt, CAUGHT)
                .isBefore(electedAt);
    }
}
