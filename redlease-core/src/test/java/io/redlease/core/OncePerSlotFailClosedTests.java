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
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Once-per-slot jobs fail closed: a run that did not complete inside an active term is never
 * marked, and every configuration the guarantee cannot hold in is refused at startup. Each test is
 * one point of issue 18 on a Spring path the first tests did not take.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotFailClosedTests {

    /** Every run that returned, with its slot and whether it was cut short. */
    static final Queue<Ran> RUNS = new ConcurrentLinkedQueue<>();

    /** Holds the first run of a blocking job until the test lets it go or interrupts it. */
    static volatile CountDownLatch release = new CountDownLatch(0);

    static volatile CountDownLatch started = new CountDownLatch(1);

    /** Whether the blocking job's first run has started; later runs do not block. */
    static final AtomicBoolean firstRun = new AtomicBoolean();

    /** Holds the only scheduler thread of the late-tick test once. */
    static volatile CountDownLatch hog = new CountDownLatch(0);

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
        hog = new CountDownLatch(0);
        firstRun.set(false);
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        hog.countDown();
        instances.forEach(SlotInstance::close);
        templates.close();
    }

    record Ran(String job, Instant slot, boolean catchUp, boolean cutShort, long at) {}

    record Outcome(String job, Instant slot, SlotJobs.Result result, long count) {}

    private SlotInstance instance(String id) {
        SlotInstance instance = new SlotInstance(redis, name, id, Duration.ZERO);
        instances.add(instance);
        return instance;
    }

    private static Queue<Outcome> outcomes(SlotInstance instance) {
        Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        instance.jobs()
                .addListener(
                        (job, slot, result, count) ->
                                outcomes.add(new Outcome(job, slot, result, count)));
        return outcomes;
    }

    /**
     * The id of a test job: its bean name (as {@code register} names a nested class) and method.
     */
    private static String job(Class<?> type) {
        return "oncePerSlotFailClosedTests." + type.getSimpleName() + ".job";
    }

    private Map<Object, Object> ledger(String job) {
        return redis.opsForHash().entries(name + ":slots:" + job);
    }

    /** A job whose first run blocks until released or interrupted, and then returns normally. */
    static class Blocking {

        final LeadershipContext leadership;

        Blocking(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void job() {
            Slot slot = leadership.slot().orElseThrow();
            boolean cutShort = false;
            if (firstRun.compareAndSet(false, true)) {
                started.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    // The term ended: the run is cut short, and the method returns normally.
                    cutShort = true;
                }
            }
            RUNS.add(
                    new Ran(
                            slot.job(),
                            slot.time(),
                            slot.catchUp(),
                            cutShort,
                            System.currentTimeMillis()));
        }
    }

    /** The same job, not interrupted when its term ends. */
    static class Uninterrupted extends Blocking {

        Uninterrupted(LeadershipContext leadership) {
            super(leadership);
        }

        @Override
        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                interruptOnStepDown = false)
        public void job() {
            super.job();
        }
    }

    private Ran firstRunOf(String job) {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RUNS.stream().anyMatch(run -> run.job().equals(job)));
        return RUNS.stream().filter(run -> run.job().equals(job)).findFirst().orElseThrow();
    }

    // Point 1: a run cut short but returning normally is never marked.

    @Test
    void aRunCutShortByAResignationIsNotMarkedAndRunsAgain() throws Exception {
        release = new CountDownLatch(1);
        // The job's very first slot: cut short, it is missed like any other.
        SlotInstance a = instance("a").with(Blocking.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        a.elector.resign();
        Ran cut = firstRunOf(job(Blocking.class));
        assertThat(cut.cutShort()).isTrue();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> outcomes.stream().anyMatch(o -> o.slot().equals(cut.slot())));
        assertThat(outcomes)
                .filteredOn(o -> o.slot().equals(cut.slot()))
                .first()
                .extracting(Outcome::result)
                .isEqualTo(SlotJobs.Result.FAILED);
        // Elected again, the instance catches the slot up: it was never marked.
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                RUNS.stream()
                                        .anyMatch(
                                                run ->
                                                        run.slot().equals(cut.slot())
                                                                && !run.cutShort()));
    }

    @Test
    void aRunCutShortByTheDrainTimeoutAtShutdownIsNotMarked() throws Exception {
        release = new CountDownLatch(1);
        SlotInstance a = instance("a").with(Blocking.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        Map<Object, Object> before = ledger(job(Blocking.class));
        a.elector.stopAsync(Duration.ofMillis(200));
        Ran cut = firstRunOf(job(Blocking.class));
        assertThat(cut.cutShort()).isTrue();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> outcomes.stream().anyMatch(o -> o.slot().equals(cut.slot())));
        assertThat(outcomes)
                .filteredOn(o -> o.slot().equals(cut.slot()))
                .extracting(Outcome::result)
                .containsOnly(SlotJobs.Result.FAILED);
        assertThat(ledger(job(Blocking.class))).isEqualTo(before);
    }

    @Test
    void aRunThatOutlivesItsLeaseIsNotMarkedEvenWithoutASuccessor() throws Exception {
        release = new CountDownLatch(1);
        SlotInstance a = instance("a").with(Uninterrupted.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        long token = a.elector.token().orElseThrow();
        // The lease lapses in Redis while the run goes on; nobody else contends.
        redis.delete(name + ":leader");
        release.countDown();
        Ran late = firstRunOf(job(Uninterrupted.class));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> outcomes.stream().anyMatch(o -> o.slot().equals(late.slot())));
        assertThat(outcomes)
                .filteredOn(o -> o.slot().equals(late.slot()))
                .first()
                .extracting(Outcome::result)
                .isEqualTo(SlotJobs.Result.FAILED);
        // The ledger's token is the last claim's or mark's: the lapsed term's own claim wrote it,
        // so
        // only a completed slot recorded with that token would be that term's mark.
        Map<Object, Object> ledger = ledger(job(Uninterrupted.class));
        Object slot = ledger.get("slot");
        boolean markedByLapsedTerm =
                slot != null
                        && Long.parseLong((String) slot) == late.slot().toEpochMilli()
                        && Long.parseLong((String) ledger.get("token")) == token;
        assertThat(markedByLapsedTerm)
                .as("the ledger was marked by the term whose lease had lapsed: %s", ledger)
                .isFalse();
    }

    // Point 2: @Async with oncePerSlot is refused.

    @EnableAsync
    static class AsyncJob {
        @Async
        @Scheduled(fixedRate = 1000)
        @LeaderOnly(oncePerSlot = true)
        public void job() {}
    }

    @Test
    void anAsyncOncePerSlotMethodFailsAtStartup() {
        assertStartupFails(AsyncJob.class, "AsyncJob.job()", "@Async");
    }

    /** Marks methods for asynchronous execution, as {@code @EnableAsync(annotation)} allows. */
    @java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
    @java.lang.annotation.Target(java.lang.annotation.ElementType.METHOD)
    @interface InBackground {}

    @EnableAsync(annotation = InBackground.class)
    static class CustomAsyncJob {
        @InBackground
        @Scheduled(fixedRate = 1000)
        @LeaderOnly(oncePerSlot = true)
        public void job() {}
    }

    @Test
    void aOncePerSlotMethodBehindAsynchronousAdviceOfAnotherAnnotationFailsAtStartup() {
        assertStartupFails(
                CustomAsyncJob.class,
                "oncePerSlotFailClosedTests.CustomAsyncJob.job",
                "asynchronous");
    }

    @Test
    void aOncePerSlotMethodCalledDirectlyIsRefused() {
        SlotInstance a = instance("a").with(OnDefaultScheduler.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> !RUNS.isEmpty());
        OnDefaultScheduler job = a.context.getBean(OnDefaultScheduler.class);
        // Refused before the method runs: its body would fail on the empty slot instead.
        assertThatExceptionOfType(IllegalStateException.class)
                .isThrownBy(job::job)
                .withMessageContaining("runs only as one of its slots");
    }

    // Point 3: a healthy leader never drops a slot, however late its scheduler is.

    static class LateRate {

        final LeadershipContext leadership;

        LateRate(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 400)
        @LeaderOnly(oncePerSlot = true)
        public void job() throws InterruptedException {
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(
                    new Ran(
                            slot.job(),
                            slot.time(),
                            slot.catchUp(),
                            false,
                            System.currentTimeMillis()));
            if (RUNS.size() == 3) {
                // Holds the scheduler's only thread for more than two periods, once.
                hog.await(1_100, TimeUnit.MILLISECONDS);
            }
        }
    }

    @Test
    void aLateTickOfAHealthyLeaderDropsNoSlot() {
        hog = new CountDownLatch(1);
        SlotInstance a =
                new SlotInstance(
                        redis,
                        name,
                        "a",
                        context ->
                                context.registerBean(
                                        "taskScheduler",
                                        ThreadPoolTaskScheduler.class,
                                        () -> SlotInstance.scheduler("a", Duration.ZERO, 1)));
        instances.add(a);
        a.with(LateRate.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        await().atMost(Duration.ofSeconds(15)).until(() -> RUNS.size() >= 9);
        assertThat(outcomes).extracting(Outcome::result).doesNotContain(SlotJobs.Result.MISSED);
        List<Instant> slots = RUNS.stream().map(Ran::slot).toList();
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .as("slots %s", slots)
                    .isEqualTo(Duration.ofMillis(400));
        }
    }

    // Point 4: maxCatchUp is bounded.

    static class HugeCatchUp {
        @Scheduled(fixedRate = 1000)
        @LeaderOnly(
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = Integer.MAX_VALUE)
        public void job() {}
    }

    @Test
    void aMaxCatchUpAboveTheLimitFailsAtStartup() {
        assertStartupFails(HugeCatchUp.class, "HugeCatchUp.job()", "at most 1000");
    }

    // Point 5: the job runs on the scheduler Spring runs the method on.

    /** Records each run's slot. */
    static class Recorded {

        final LeadershipContext leadership;

        Recorded(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        void record() {
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(
                    new Ran(
                            slot.job(),
                            slot.time(),
                            slot.catchUp(),
                            false,
                            System.currentTimeMillis()));
        }
    }

    static class OnQualifiedScheduler extends Recorded {
        OnQualifiedScheduler(LeadershipContext leadership) {
            super(leadership);
        }

        @Scheduled(fixedRate = 300, scheduler = "reports")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void aJobRunsOnASchedulerNamedByItsQualifier() {
        SlotInstance a =
                new SlotInstance(
                        redis,
                        name,
                        "a",
                        context -> {
                            context.registerBean(
                                    "taskScheduler",
                                    ThreadPoolTaskScheduler.class,
                                    () -> SlotInstance.scheduler("main", Duration.ZERO, 1));
                            context.registerBean(
                                    "reportScheduler",
                                    ThreadPoolTaskScheduler.class,
                                    () -> SlotInstance.scheduler("reports", Duration.ZERO, 1),
                                    definition ->
                                            ((AbstractBeanDefinition) definition)
                                                    .addQualifier(
                                                            new AutowireCandidateQualifier(
                                                                    Qualifier.class, "reports")));
                        });
        instances.add(a);
        a.with(OnQualifiedScheduler.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        assertThat(ledger(job(OnQualifiedScheduler.class))).containsKey("slot");
    }

    static class OnDefaultScheduler extends Recorded {
        OnDefaultScheduler(LeadershipContext leadership) {
            super(leadership);
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void aJobRunsOnAScheduledExecutorServiceNamedTaskScheduler() {
        SlotInstance a =
                new SlotInstance(
                        redis,
                        name,
                        "a",
                        context ->
                                context.registerBean(
                                        "taskScheduler",
                                        java.util.concurrent.ScheduledExecutorService.class,
                                        () -> Executors.newScheduledThreadPool(1),
                                        definition -> definition.setDestroyMethodName("shutdown")));
        instances.add(a);
        a.with(OnDefaultScheduler.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        assertThat(ledger(job(OnDefaultScheduler.class))).containsKey("slot");
    }

    // Point 6: SpEL in @Scheduled attributes is resolved as Spring resolves it.

    static class SpelRate extends Recorded {
        SpelRate(LeadershipContext leadership) {
            super(leadership);
        }

        @Scheduled(fixedRateString = "#{200 + 100}")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void spelInTheScheduledAttributesIsResolved() {
        instance("a").with(SpelRate.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        List<Instant> slots = RUNS.stream().map(Ran::slot).toList();
        assertThat(Duration.between(slots.get(0), slots.get(2))).isEqualTo(Duration.ofMillis(600));
    }

    // Point 7: fixedDelay with SKIP does not run the overdue slot after election.

    static class SkippingDelay extends Recorded {
        SkippingDelay(LeadershipContext leadership) {
            super(leadership);
        }

        @Scheduled(fixedDelay = 3000, initialDelay = 300)
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void job() {
            record();
        }
    }

    @Test
    void aFixedDelayWithSkipRunsOneDelayAfterElectionNotTheMissedSlot() {
        Instant completed = Instant.now().minusSeconds(10).truncatedTo(ChronoUnit.MILLIS);
        redis.opsForHash()
                .putAll(
                        name + ":slots:" + job(SkippingDelay.class),
                        Map.of(
                                "slot", Long.toString(completed.toEpochMilli()),
                                "completed", Long.toString(completed.toEpochMilli())));
        SlotInstance a = instance("a").with(SkippingDelay.class);
        Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        a.start();
        a.jobs()
                .addListener(
                        (job, slot, result, count) ->
                                outcomes.add(new Outcome(job, slot, result, count)));
        await().atMost(Duration.ofSeconds(10)).until(() -> !RUNS.isEmpty());
        Ran first = RUNS.peek();
        assertThat(first.catchUp()).isFalse();
        assertThat(first.slot().toEpochMilli())
                .as("the first run's slot, against the election at %s", a.electedAt)
                .isGreaterThanOrEqualTo(a.electedAt + 3000 - 50);
    }

    // Point 8: a reactive job was called at registration and never ran; it is now checked at each
    // subscription (ReactiveScheduledTests).

    // Point 9: a persistent cron backlog is handled once, not at every tick.

    static class AlwaysFailing {
        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            RUNS.add(
                    new Ran(
                            OncePerSlotFailClosedTests.job(AlwaysFailing.class),
                            Instant.now(),
                            false,
                            false,
                            0));
            throw new IllegalStateException("this job always fails");
        }
    }

    @Test
    void aPersistentCronBacklogIsCountedOnceNotAtEveryTick() {
        Instant completed =
                Instant.now().minus(Duration.ofDays(365)).truncatedTo(ChronoUnit.SECONDS);
        redis.opsForHash()
                .putAll(
                        name + ":slots:" + job(AlwaysFailing.class),
                        Map.of(
                                "slot", Long.toString(completed.toEpochMilli()),
                                "completed", Long.toString(completed.toEpochMilli())));
        SlotInstance a = instance("a").with(AlwaysFailing.class);
        a.context.refresh();
        Queue<Outcome> outcomes = outcomes(a);
        a.elector.start();
        await().atMost(Duration.ofSeconds(15)).until(() -> RUNS.size() >= 4);
        List<Outcome> missed =
                outcomes.stream().filter(o -> o.result() == SlotJobs.Result.MISSED).toList();
        assertThat(missed).isNotEmpty();
        assertThat(missed.get(0).count()).isGreaterThanOrEqualTo(1_000);
        assertThat(missed.subList(1, missed.size()))
                .as("missed slots after the first count: %s", missed)
                .allSatisfy(o -> assertThat(o.count()).isLessThanOrEqualTo(1));
    }

    private void assertStartupFails(Class<?> component, String method, String rule) {
        SlotInstance instance =
                new SlotInstance(redis, name, "bad-" + component.getSimpleName(), Duration.ZERO);
        instances.add(instance);
        instance.with(component);
        assertThatExceptionOfType(RuntimeException.class)
                .isThrownBy(instance.context::refresh)
                .satisfies(ex -> assertThat(messages(ex)).contains(method).contains(rule));
    }

    private static String messages(Throwable ex) {
        StringBuilder messages = new StringBuilder();
        for (Throwable at = ex; at != null; at = at.getCause()) {
            messages.append(at.getMessage()).append('\n');
        }
        return messages.toString();
    }
}
