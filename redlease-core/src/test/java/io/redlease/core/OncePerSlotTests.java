package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * {@code @LeaderOnly(oncePerSlot = true)} with Spring's own scheduler, several instances in one JVM
 * (each a context with its own scheduler and a skewed clock), over real Redis.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotTests {

    /** Every completed run of every instance, in completion order. */
    static final Collection<Run> RUNS = new ConcurrentLinkedQueue<>();

    /** Holds the blocking job's run until the test lets it go. */
    static volatile CountDownLatch release = new CountDownLatch(0);

    /** Counts the blocking job's runs that have started. */
    static volatile CountDownLatch started = new CountDownLatch(1);

    private final Templates templates = new Templates();

    private final List<SlotInstance> instances = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        RUNS.clear();
        release = new CountDownLatch(0);
        started = new CountDownLatch(1);
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        for (SlotInstance instance : instances) {
            instance.close();
        }
        templates.close();
    }

    /** Creates an instance whose scheduler's clock is skewed, with the given components. */
    private SlotInstance instance(String id, Duration skew, Class<?>... components) {
        SlotInstance instance = new SlotInstance(redis, name, id, skew);
        if (components.length > 0) {
            instance.with(components);
        }
        instances.add(instance);
        return instance;
    }

    /** A completed run: who ran which slot of which job, and when (on the shared real clock). */
    record Run(
            String instance,
            String job,
            Instant slot,
            boolean catchUp,
            long startedAt,
            long endedAt) {}

    /** Records a run, with the slot the running code reads from its context. */
    abstract static class Recording {

        final LeadershipContext leadership;

        final String instance;

        Recording(LeadershipContext leadership, String instanceId) {
            this.leadership = leadership;
            this.instance = instanceId;
        }

        void record() {
            long startedAt = System.currentTimeMillis();
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(
                    new Run(
                            instance,
                            slot.job(),
                            slot.time(),
                            slot.catchUp(),
                            startedAt,
                            System.currentTimeMillis()));
        }
    }

    static class EverySecond extends Recording {

        EverySecond(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        // RUN_ALL, so that a hand-off slowed down past a slot boundary cannot drop a slot.
        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void cron() {
            record();
        }

        @Scheduled(fixedRate = 700)
        @LeaderOnly(oncePerSlot = true)
        public void rate() {
            record();
        }

        @Scheduled(fixedDelay = 600)
        @LeaderOnly(oncePerSlot = true)
        public void delay() {
            record();
        }
    }

    private List<Run> runs(String job) {
        return RUNS.stream().filter(run -> run.job().endsWith("." + job)).toList();
    }

    private static void assertEachSlotOnce(List<Run> runs) {
        Map<Instant, List<Run>> bySlot =
                runs.stream()
                        .collect(
                                Collectors.groupingBy(
                                        Run::slot, TreeMap::new, Collectors.toList()));
        assertThat(bySlot.values()).allSatisfy(same -> assertThat(same).hasSize(1));
    }

    private SlotInstance leader() {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> instances.stream().anyMatch(instance -> instance.elector.isLeader()));
        return instances.stream()
                .filter(instance -> instance.elector.isLeader())
                .findFirst()
                .orElseThrow();
    }

    @Test
    void slotsRunOnceAcrossHandOffsBetweenInstancesWithSkewedClocks() {
        instance("a", Duration.ZERO, EverySecond.class).start();
        instance("b", Duration.ofMillis(300), EverySecond.class).start();
        instance("c", Duration.ofMillis(-400), EverySecond.class).start();
        for (int handOff = 0; handOff < 6; handOff++) {
            SlotInstance leader = leader();
            int before = runs("cron").size();
            // Hand off once this leader has run a cron slot of its own.
            await().atMost(Duration.ofSeconds(10))
                    .until(
                            () ->
                                    runs("cron").stream()
                                            .skip(before)
                                            .anyMatch(run -> run.instance().equals(leader.id)));
            // A graceful hand-off: stop() lets the runs in flight finish and mark before the lease
            // is released. (resign() ends the term at once: a run it cuts short is not marked and
            // runs again under the next leader, as the README says.)
            leader.elector.stop();
            leader.elector.start();
        }
        int total = runs("cron").size();
        await().atMost(Duration.ofSeconds(10)).until(() -> runs("cron").size() > total + 1);
        instances.forEach(SlotInstance::close);

        List<Run> cron = runs("cron");
        assertEachSlotOnce(cron);
        // Every second from the first completed slot to the last ran: none missed.
        List<Instant> slots = cron.stream().map(Run::slot).sorted().toList();
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .isEqualTo(Duration.ofSeconds(1));
        }
        assertThat(cron.stream().map(Run::instance).distinct()).hasSizeGreaterThan(1);

        List<Run> rate = runs("rate");
        assertEachSlotOnce(rate);
        List<Instant> rateSlots = rate.stream().map(Run::slot).sorted().toList();
        for (int i = 1; i < rateSlots.size(); i++) {
            // Slots are whole periods from one shared start, whoever runs them.
            assertThat(Duration.between(rateSlots.get(0), rateSlots.get(i)).toMillis() % 700)
                    .as("rate slots %s", rate)
                    .isZero();
        }

        List<Run> delay = runs("delay");
        assertEachSlotOnce(delay);
        Map<String, Long> skews = Map.of("a", 0L, "b", 300L, "c", -400L);
        assertThat(delay).extracting(Run::instance).hasSizeGreaterThan(2);
        assertThat(delay.stream().map(Run::instance).distinct()).hasSizeGreaterThan(1);
        for (int i = 1; i < delay.size(); i++) {
            Run previous = delay.get(i - 1);
            Run next = delay.get(i);
            // The delay (600 ms) holds across hand-offs, less what the next runner's clock is
            // ahead of the previous one's and the tolerance for a tick that fires early (100 ms).
            long ahead = Math.max(0, skews.get(next.instance()) - skews.get(previous.instance()));
            assertThat(next.startedAt() - previous.endedAt())
                    .as("gap between %s and %s", previous, next)
                    .isGreaterThanOrEqualTo(600 - ahead - 100);
        }
    }

    /** A job whose clock is one second; the ledger is seeded as if slots had been missed. */
    static class Seeded extends Recording {

        Seeded(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }
    }

    static class RunAll extends Seeded {
        RunAll(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL, maxCatchUp = 3)
        public void job() {
            record();
        }
    }

    static class RunLatest extends Seeded {
        RunLatest(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    static class Skip extends Seeded {
        Skip(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void job() {
            record();
        }
    }

    /** Starts one instance whose job last completed a slot ten seconds ago. */
    private SlotInstance startSeeded(Class<?> job, String beanName, Collection<Long> missed) {
        Instant completed =
                Instant.now().minusSeconds(10).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        redis.opsForHash()
                .putAll(
                        name + ":slots:" + beanName + ".job",
                        Map.of(
                                "slot", Long.toString(completed.toEpochMilli()),
                                "completed", Long.toString(completed.toEpochMilli())));
        SlotInstance instance = instance("a", Duration.ZERO);
        instance.context.registerBean(beanName, job);
        instance.context.refresh();
        instance.jobs()
                .addListener(
                        (id, slot, result, count) -> {
                            if (result == SlotJobs.Result.MISSED) {
                                missed.add(count);
                            }
                        });
        instance.elector.start();
        return instance;
    }

    @Test
    void runAllCatchesUpTheNewestMissedSlotsOldestFirstUpToTheMaximum() {
        Collection<Long> missed = new ConcurrentLinkedQueue<>();
        startSeeded(RunAll.class, "runAll", missed);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RUNS.stream().anyMatch(Predicate.not(Run::catchUp)));
        List<Run> caughtUp = RUNS.stream().filter(Run::catchUp).toList();
        assertThat(caughtUp).hasSize(3);
        List<Instant> slots = caughtUp.stream().map(Run::slot).toList();
        assertThat(slots).isSorted();
        assertThat(Duration.between(slots.get(0), slots.get(2))).isEqualTo(Duration.ofSeconds(2));
        // About nine slots were due; the older ones were dropped and counted.
        assertThat(missed).hasSize(1);
        assertThat(missed.iterator().next()).isBetween(6L, 10L);
        assertEachSlotOnce(new ArrayList<>(RUNS));
    }

    @Test
    void runLatestRunsOnlyTheMostRecentMissedSlotRightAfterElection() {
        Collection<Long> missed = new ConcurrentLinkedQueue<>();
        SlotInstance instance = startSeeded(RunLatest.class, "runLatest", missed);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RUNS.stream().anyMatch(Predicate.not(Run::catchUp)));
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        // The first run is the newest slot due at election (caught up right after it, or by a
        // tick that came first); the nine or so older ones are dropped.
        assertThat(RUNS.stream().filter(Run::catchUp)).hasSizeLessThanOrEqualTo(1);
        List<Instant> slots = RUNS.stream().map(Run::slot).toList();
        assertThat(slots.get(0)).isAfter(Instant.now().minusSeconds(4));
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .isEqualTo(Duration.ofSeconds(1));
        }
        assertThat(missed).hasSize(1);
        assertThat(missed.iterator().next()).isBetween(7L, 11L);
        assertThat(instance.elector.isLeader()).isTrue();
        assertEachSlotOnce(new ArrayList<>(RUNS));
    }

    @Test
    void skipRunsNoMissedSlotAndCountsThem() {
        Collection<Long> missed = new ConcurrentLinkedQueue<>();
        startSeeded(Skip.class, "skip", missed);
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 2);
        assertThat(RUNS).noneMatch(Run::catchUp);
        assertThat(missed).hasSize(1);
        assertThat(missed.iterator().next()).isGreaterThanOrEqualTo(8L);
        assertEachSlotOnce(new ArrayList<>(RUNS));
    }

    /** A job that keeps running when its term ends, until the test lets it go. */
    static class Stubborn extends Recording {

        Stubborn(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        // RUN_ALL: the successor catches up the stale leader's slot even when a later one has
        // come due by its election.
        @Scheduled(cron = "*/2 * * * * *")
        @LeaderOnly(
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                interruptOnStepDown = false)
        public void job() throws InterruptedException {
            started.countDown();
            // Holds the run while the test takes the term away: the run outlives its term.
            release.await(30, TimeUnit.SECONDS);
            record();
        }
    }

    @Test
    void aLeaderWhoseTermEndedDuringTheRunCannotMarkTheSlot() throws Exception {
        release = new CountDownLatch(1);
        // A slot completed earlier, so the slot a is running is one a successor catches up.
        long earlier = Instant.now().minusSeconds(2).toEpochMilli();
        redis.opsForHash()
                .putAll(
                        name + ":slots:oncePerSlotTests.Stubborn.job",
                        Map.of(
                                "slot",
                                Long.toString(earlier),
                                "completed",
                                Long.toString(earlier)));
        SlotInstance a = instance("a", Duration.ZERO, Stubborn.class).start();
        await().atMost(Duration.ofSeconds(10)).until(a.elector::isLeader);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        long staleToken = a.elector.token().orElseThrow();
        Collection<SlotJobs.Result> results = new ConcurrentLinkedQueue<>();
        a.jobs().addListener((id, slot, result, count) -> results.add(result));
        // a stops contending but keeps its term while its run is held; then its lease is lost
        // and b takes over and catches the slot up.
        a.elector.stopAsync(Duration.ofSeconds(30));
        SlotInstance b = instance("b", Duration.ZERO, Stubborn.class).start();
        redis.delete(name + ":leader");
        await().atMost(Duration.ofSeconds(10)).until(() -> !a.elector.isLeader());
        await().atMost(Duration.ofSeconds(10)).until(b.elector::isLeader);
        long freshToken = b.elector.token().orElseThrow();
        assertThat(freshToken).isGreaterThan(staleToken);
        release.countDown();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                RUNS.stream().anyMatch(run -> run.instance().equals("a"))
                                        && results.contains(SlotJobs.Result.FAILED));
        Run stale =
                RUNS.stream().filter(run -> run.instance().equals("a")).findFirst().orElseThrow();
        // b ran the slot a could not mark, as a catch-up, and the ledger holds b's mark.
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                RUNS.stream()
                                        .anyMatch(
                                                run ->
                                                        run.instance().equals("b")
                                                                && run.slot().equals(stale.slot())
                                                                && run.catchUp()));
        Map<Object, Object> ledger =
                redis.opsForHash().entries(name + ":slots:oncePerSlotTests.Stubborn.job");
        assertThat(ledger).isNotEmpty();
        assertThat(Long.parseLong((String) ledger.get("token"))).isEqualTo(freshToken);
        assertThat(Long.parseLong((String) ledger.get("slot")))
                .isGreaterThanOrEqualTo(stale.slot().toEpochMilli());
        assertThat(results).doesNotContain(SlotJobs.Result.RUN, SlotJobs.Result.CAUGHT_UP);
    }

    static class NotScheduled {
        @LeaderOnly(oncePerSlot = true)
        public void job() {}
    }

    static class NegativeMaximum {
        @Scheduled(fixedRate = 1000)
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL, maxCatchUp = -1)
        public void job() {}
    }

    @LeaderOnly(oncePerSlot = true)
    static class OnType {
        @Scheduled(fixedRate = 1000)
        public void job() {}
    }

    static class PolicyWithoutOncePerSlot {
        @Scheduled(fixedRate = 1000)
        @LeaderOnly(missedSlots = MissedSlots.SKIP)
        public void job() {}
    }

    static class TwoTriggers {
        @Scheduled(fixedRate = 1000)
        @Scheduled(cron = "0 * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void job() {}
    }

    @Test
    void badCombinationsFailAtStartupNamingTheMethod() {
        assertStartupFails(NotScheduled.class, "NotScheduled.job()", "is not @Scheduled");
        assertStartupFails(NegativeMaximum.class, "NegativeMaximum.job()", "maxCatchUp = -1");
        assertStartupFails(
                OnType.class, "OnType", "put @LeaderOnly(oncePerSlot = true) on the methods");
        assertStartupFails(
                PolicyWithoutOncePerSlot.class,
                "PolicyWithoutOncePerSlot.job()",
                "without oncePerSlot = true");
        assertStartupFails(TwoTriggers.class, "TwoTriggers.job()", "2 @Scheduled triggers");
    }

    private void assertStartupFails(Class<?> component, String method, String rule) {
        SlotInstance instance =
                instance("bad-" + component.getSimpleName(), Duration.ZERO, component);
        assertThatExceptionOfType(BeanCreationException.class)
                .isThrownBy(instance.context::refresh)
                .satisfies(ex -> assertThat(rootMessage(ex)).contains(method).contains(rule));
    }

    private static String rootMessage(Throwable ex) {
        StringBuilder messages = new StringBuilder();
        for (Throwable at = ex; at != null; at = at.getCause()) {
            messages.append(at.getMessage()).append('\n');
        }
        return messages.toString();
    }

    @Test
    void theSlotIsEmptyOutsideAOncePerSlotRun() {
        SlotInstance instance = instance("a", Duration.ZERO, EverySecond.class).start();
        LeadershipContext leadership = instance.context.getBean(LeadershipContext.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> !runs("cron").isEmpty());
        assertThat(leadership.slot()).isEmpty();
        assertThat(runs("cron").get(0).slot().toEpochMilli() % 1000).isZero();
    }
}
