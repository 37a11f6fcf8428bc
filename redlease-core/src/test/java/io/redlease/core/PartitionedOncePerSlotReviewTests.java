package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Hostile review of {@code @LeaderOnly(partitions, oncePerSlot = true)} (issue 21): each test is an
 * attack, and passing shows the promise held (the one defect it found, slots lost by partitions
 * assigned before Spring scheduled the job, is fixed: see its test).
 */
@ExtendWith(RedisExtension.class)
class PartitionedOncePerSlotReviewTests {

    static final long PERIOD = 500;

    static final long FAST = 200;

    /** Every run whose method returned, on any instance. */
    static final Queue<Ran> RUNS = new ConcurrentLinkedQueue<>();

    static final ThreadLocal<Ran> LAST = new ThreadLocal<>();

    /** Blocking job: released when interrupted. */
    static volatile CountDownLatch blocked = new CountDownLatch(1);

    /** Throwing job: the partition and the run index (per partition) that throws once. */
    static final Map<Integer, AtomicLong> RUN_COUNT = new ConcurrentHashMap<>();

    static final AtomicReference<Instant> THREW = new AtomicReference<>();

    private final Templates templates = new Templates();

    private final List<Node> nodes = new ArrayList<>();

    private final List<TcpProxy> proxies = new ArrayList<>();

    private final Queue<Ran> marked = new ConcurrentLinkedQueue<>();

    private final Queue<Ran> failed = new ConcurrentLinkedQueue<>();

    private final AtomicLong missed = new AtomicLong();

    private final Queue<String> unmatched = new ConcurrentLinkedQueue<>();

    private RedisServer server;

    private String name;

    /** The partitions' lease time; a longer one makes a longer lapse. */
    private Duration ttl = Duration.ofSeconds(1);

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
        RUNS.clear();
        RUN_COUNT.clear();
        THREW.set(null);
        blocked = new CountDownLatch(1);
        release = new CountDownLatch(1);
        BLOCKER.set(null);
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
        proxies.forEach(TcpProxy::close);
        templates.close();
    }

    record Ran(
            String instance,
            int partition,
            Instant slot,
            long token,
            boolean cutShort,
            boolean catchUp) {}

    abstract static class Base {

        final LeadershipContext leadership;

        final String instance;

        Base(LeadershipContext leadership, String instanceId) {
            this.leadership = leadership;
            this.instance = instanceId;
        }

        Ran record(boolean cutShort) {
            Slot slot = leadership.slot().orElseThrow();
            int partition = leadership.partition().orElseThrow();
            long token = leadership.fencer().orElseThrow().token();
            Ran ran = new Ran(instance, partition, slot.time(), token, cutShort, slot.catchUp());
            LAST.set(ran);
            RUNS.add(ran);
            return ran;
        }
    }

    static class Skipping extends Base {
        Skipping(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void run() {
            record(false);
        }
    }

    static class RunAll extends Base {
        RunAll(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 100)
        public void run() {
            record(false);
        }
    }

    /** Partition 0's third run blocks until its term ends and interrupts it. */
    static class BlockingP0 extends Base {
        BlockingP0(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 100)
        public void run() {
            int partition = leadership.partition().orElseThrow();
            long n = RUN_COUNT.computeIfAbsent(partition, p -> new AtomicLong()).incrementAndGet();
            boolean cutShort = false;
            if (partition == 0 && n == 3) {
                blocked.countDown();
                try {
                    new CountDownLatch(1).await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    cutShort = true;
                }
            }
            record(cutShort);
        }
    }

    /** Many partitions, fast rate, default policy. */
    static class Fast extends Base {
        Fast(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = FAST)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {
            record(false);
        }
    }

    /** Partition 1's third run throws, once; default policy (RUN_LATEST). */
    static class Throwing extends Base {
        Throwing(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {
            int partition = leadership.partition().orElseThrow();
            long n = RUN_COUNT.computeIfAbsent(partition, p -> new AtomicLong()).incrementAndGet();
            if (partition == 1 && n == 3) {
                THREW.set(leadership.slot().orElseThrow().time());
                throw new IllegalStateException("partition 1 fails once");
            }
            record(false);
        }
    }

    /** The first run to reach its third call blocks (on a pool of one thread) until released. */
    static volatile CountDownLatch release = new CountDownLatch(1);

    static final AtomicReference<Integer> BLOCKER = new AtomicReference<>();

    static class Hogging extends Base {
        Hogging(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 100)
        public void run() {
            int partition = leadership.partition().orElseThrow();
            long n = RUN_COUNT.computeIfAbsent(partition, p -> new AtomicLong()).incrementAndGet();
            boolean cutShort = false;
            if (n == 3 && instance.equals("a") && BLOCKER.compareAndSet(null, partition)) {
                blocked.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    cutShort = true;
                }
            }
            record(cutShort);
        }
    }

    static class RunAllMaxOne extends Base {
        RunAllMaxOne(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 1)
        public void run() {
            record(false);
        }
    }

    static class Cron extends Base {
        Cron(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void run() {
            record(false);
        }
    }

    static class Delay extends Base {
        Delay(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedDelay = PERIOD)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {
            record(false);
        }
    }

    /**
     * The same SKIP job on ONE election, for the control of the assignment-before-scheduling
     * defect.
     */
    static class SingleSkipping {
        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void run() {}
    }

    /** Many partitions, fast rate, each run busy 20 ms (work, not synchronisation). */
    static class SlowFast extends Base {
        SlowFast(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = FAST)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {
            long until = System.nanoTime() + 20_000_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            record(false);
        }
    }

    /** Partition 1's third run throws, once; RUN_ALL retries it. */
    static class ThrowingRunAll extends Base {
        ThrowingRunAll(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void run() {
            int partition = leadership.partition().orElseThrow();
            long n = RUN_COUNT.computeIfAbsent(partition, p -> new AtomicLong()).incrementAndGet();
            if (partition == 1 && n == 3) {
                THREW.set(leadership.slot().orElseThrow().time());
                throw new IllegalStateException("partition 1 fails once");
            }
            record(false);
        }
    }

    /** Runs a step while the context refreshes, after singletons and before Spring schedules. */
    static final class SlowStart implements SmartInitializingSingleton {
        final Runnable step;

        SlowStart(Runnable step) {
            this.step = step;
        }

        @Override
        public void afterSingletonsInstantiated() {
            step.run();
        }
    }

    final class Node implements AutoCloseable {

        final String id;

        final PartitionedElection election;

        final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();

        volatile Instant assignedAt;

        /** How long after a term begins the jobs hear of it (the callback lane's delay). */
        volatile Duration lateAssignment = Duration.ZERO;

        Node(String id, StringRedisTemplate redis, int partitions, int pool, Class<?> job) {
            this.id = id;
            context.registerBean(
                    "taskScheduler",
                    org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler.class,
                    () -> SlotInstance.scheduler(id, Duration.ZERO, pool));
            this.election =
                    new PartitionedElection(
                            redis,
                            PartitionedElectionConfig.builder(name, partitions)
                                    .instanceId(id)
                                    .ttl(ttl)
                                    .listener(
                                            new PartitionListener() {
                                                @Override
                                                public void onAssigned(int partition, long token) {
                                                    Duration late = lateAssignment;
                                                    if (!late.isZero()) {
                                                        // A slow callback lane: the term has
                                                        // begun, the jobs hear of it this late.
                                                        await().pollDelay(late).until(() -> true);
                                                    }
                                                    jobs().partitionListener("orders")
                                                            .onAssigned(partition, token);
                                                }
                                            })
                                    .build());
            Elections elections = Elections.of(Map.of(), Map.of("orders", election));
            context.registerBean(Elections.class, () -> elections);
            context.registerBean(LeadershipContext.class, () -> new LeadershipContext(elections));
            context.registerBean("instanceId", String.class, () -> id);
            context.register(SlotInstance.Infrastructure.class, job);
        }

        Node start() {
            context.refresh();
            jobs().addListener(this::heard);
            election.start();
            return this;
        }

        /**
         * Starts the election while the context refreshes (a slow application: Spring schedules the
         * jobs {@code delay} after every partition was assigned here).
         */
        Node startElectionFirst(int partitions, Duration delay) {
            context.registerBean(
                    SlowStart.class,
                    () ->
                            new SlowStart(
                                    () -> {
                                        jobs().addListener(this::heard);
                                        election.start();
                                        await().atMost(Duration.ofSeconds(20))
                                                .until(() -> election.owned().size() == partitions);
                                        assignedAt = Instant.now();
                                        // Models the slow start itself, not a synchronisation.
                                        await().pollDelay(delay).until(() -> true);
                                    }));
            context.refresh();
            return this;
        }

        SlotJobs jobs() {
            return context.getBean(LeaderOnlyAnnotationBeanPostProcessor.class).slotJobs();
        }

        private void heard(String job, Instant slot, SlotJobs.Result result, long count) {
            if (result == SlotJobs.Result.MISSED) {
                missed.addAndGet(count);
            }
            if (result == SlotJobs.Result.SKIPPED || result == SlotJobs.Result.MISSED) {
                return;
            }
            Ran ran = LAST.get();
            LAST.remove();
            if (result == SlotJobs.Result.FAILED) {
                if (ran != null && ran.slot().equals(slot)) {
                    failed.add(ran);
                }
            } else if (ran == null || !ran.slot().equals(slot) || !ran.instance().equals(id)) {
                unmatched.add(id + " " + result + " " + slot + " after " + ran);
            } else {
                marked.add(ran);
            }
        }

        @Override
        public void close() {
            election.close();
            context.close();
        }
    }

    private Node node(String id, int partitions, int pool, Class<?> job) {
        Node node = new Node(id, templates.on(server), partitions, pool, job);
        nodes.add(node);
        return node;
    }

    private List<Instant> markedSlots(int partition) {
        return marked.stream()
                .filter(r -> r.partition() == partition)
                .map(Ran::slot)
                .collect(Collectors.toList());
    }

    private long markedIn(int partition, String instance) {
        return marked.stream()
                .filter(r -> r.partition() == partition && r.instance().equals(instance))
                .count();
    }

    private void awaitProgress(String instance, int partitions, int more) {
        long[] before = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            before[p] = markedIn(p, instance);
        }
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> {
                            for (int p = 0; p < partitions; p++) {
                                assertThat(markedIn(p, instance))
                                        .as("slots of partition %d marked by %s", p, instance)
                                        .isGreaterThanOrEqualTo(before[p] + more);
                            }
                        });
    }

    private void assertNoDuplicates(int partitions) {
        for (int p = 0; p < partitions; p++) {
            assertThat(markedSlots(p)).as("partition %d's marked slots", p).doesNotHaveDuplicates();
        }
    }

    /**
     * Attack: partitions assigned to this instance BEFORE Spring schedules the job (a slow start;
     * in Boot the partitioned election is a lifecycle bean started before ContextRefreshedEvent).
     * README: "an election won before Spring scheduled the job ... counts from the election", so
     * the slots that come due after the assignment are the term's own and run even under SKIP. It
     * failed before the fix: {@code PartitionSlotJobs.catchUp} ignored onAssigned while the
     * template's {@code partitionJobs} was null, so the partition job never recorded when its term
     * was won; its catch-up counted from "now" and SKIP dropped the term's own slots.
     */
    @Test
    void aPartitionAssignedBeforeSpringSchedulesTheJobKeepsItsTermsOwnSlots() {
        int partitions = 2;
        Node a = node("a", partitions, 2, Skipping.class).start();
        awaitProgress("a", partitions, 2); // the ledgers hold the rate's phase
        a.close();
        nodes.remove(a);

        Node b = node("b", partitions, 2, Skipping.class);
        b.startElectionFirst(partitions, Duration.ofMillis(4 * PERIOD));
        awaitProgress("b", partitions, 2);

        assertThat(unmatched).isEmpty();
        assertNoDuplicates(partitions);
        for (int p = 0; p < partitions; p++) {
            int partition = p;
            Instant firstByB =
                    marked.stream()
                            .filter(r -> r.partition() == partition && r.instance().equals("b"))
                            .map(Ran::slot)
                            .min(Instant::compareTo)
                            .orElseThrow();
            assertThat(firstByB)
                    .as(
                            "partition %d: b's first slot (assigned at %s, scheduled %d ms later)",
                            p, b.assignedAt, 4 * PERIOD)
                    .isBeforeOrEqualTo(b.assignedAt.plusMillis(PERIOD));
        }
    }

    /**
     * Attack: context stop/start. Do the per-partition schedules come back, with no duplicate runs?
     */
    @Test
    void holdsPerPartitionSchedulesResumeAfterContextStopAndStart() {
        int partitions = 2;
        Node a = node("a", partitions, 2, RunAll.class).start();
        awaitProgress("a", partitions, 2);
        a.context.stop();
        a.context.start();
        awaitProgress("a", partitions, 3);
        assertThat(unmatched).isEmpty();
        assertNoDuplicates(partitions);
        for (int p = 0; p < partitions; p++) {
            List<Instant> slots = markedSlots(p);
            assertThat(slots).isSorted();
            for (int i = 1; i < slots.size(); i++) {
                assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                        .as("partition %d: no slot skipped after %s (RUN_ALL)", p, slots.get(i - 1))
                        .isEqualTo(Duration.ofMillis(PERIOD));
            }
        }
    }

    /**
     * Attack: partition 0 lapses and is re-assigned to the SAME instance (new term, same holder)
     * while one of its runs is in flight. The run is cut short and not marked; the same instance's
     * new term runs the slot, once; partition 1 is unaffected in binding.
     */
    @Test
    void holdsRunCutShortByLapseIsRerunByTheSameInstancesNextTerm() throws Exception {
        int partitions = 2;
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        Node a =
                new Node(
                        "a",
                        templates.on(proxy.host(), proxy.port(), null, Duration.ofMillis(500)),
                        partitions,
                        2,
                        BlockingP0.class);
        nodes.add(a);
        a.start();
        assertThat(blocked.await(20, TimeUnit.SECONDS)).isTrue();
        long before = a.election.token(0).orElseThrow();
        proxy.drop();
        await().atMost(Duration.ofSeconds(20)).until(() -> RUNS.stream().anyMatch(Ran::cutShort));
        proxy.pass();
        proxy.cut(); // replies the drop discarded would leave the old connections out of step
        Ran cut = RUNS.stream().filter(Ran::cutShort).findFirst().orElseThrow();
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                marked.stream()
                                        .anyMatch(
                                                r ->
                                                        r.partition() == 0
                                                                && r.slot().equals(cut.slot())));

        assertThat(cut.partition()).isZero();
        assertThat(cut.token()).isEqualTo(before);
        assertThat(failed).contains(cut);
        Ran rerun =
                marked.stream()
                        .filter(r -> r.partition() == 0 && r.slot().equals(cut.slot()))
                        .findFirst()
                        .orElseThrow();
        assertThat(rerun.instance()).isEqualTo("a");
        assertThat(rerun.token()).isGreaterThan(before);
        assertThat(unmatched).isEmpty();
        assertNoDuplicates(partitions);
        assertThat(RUNS).allMatch(r -> r.partition() == 0 || r.partition() == 1);
    }

    /**
     * Attack: 64 partitions on a scheduler pool of ONE thread at a 200 ms rate. Every partition
     * progresses, and every slot between a partition's marked ones that was not marked is counted
     * as missed (nothing is dropped silently).
     */
    @Test
    void holdsSixtyFourPartitionsOnOneThreadProgressAndCountEveryDroppedSlot() {
        int partitions = 64;
        node("a", partitions, 1, Fast.class).start();
        awaitProgress("a", partitions, 3);
        long gaps = 0;
        for (int p = 0; p < partitions; p++) {
            List<Instant> slots = markedSlots(p);
            assertThat(slots).as("partition %d", p).doesNotHaveDuplicates().isSorted();
            for (int i = 1; i < slots.size(); i++) {
                gaps += Duration.between(slots.get(i - 1), slots.get(i)).toMillis() / FAST - 1;
            }
        }
        long counted = missed.get();
        assertThat(unmatched).isEmpty();
        assertThat(counted)
                .as("slots dropped between marked ones: %d", gaps)
                .isGreaterThanOrEqualTo(gaps);
    }

    /**
     * Attack: an exception in one partition's run (default RUN_LATEST): the slot is counted as
     * failed, not marked, dropped when the next slot runs (counted as missed), and the other
     * partition is unaffected.
     */
    @Test
    void holdsExceptionInOnePartitionsRunIsFailedNotMarkedAndCountedWhenDropped() {
        int partitions = 2;
        node("a", partitions, 2, Throwing.class).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> THREW.get() != null);
        awaitProgress("a", partitions, 2);
        Instant threw = THREW.get();
        assertThat(markedSlots(1)).doesNotContain(threw);
        assertThat(missed.get()).isGreaterThanOrEqualTo(1);
        List<Instant> p0 = markedSlots(0);
        for (int i = 1; i < p0.size(); i++) {
            assertThat(Duration.between(p0.get(i - 1), p0.get(i)))
                    .isEqualTo(Duration.ofMillis(PERIOD));
        }
        assertThat(unmatched).isEmpty();
        assertNoDuplicates(partitions);
    }

    private void assertContiguous(int partition, long period) {
        List<Instant> slots = markedSlots(partition);
        assertThat(slots).as("partition %d", partition).doesNotHaveDuplicates().isSorted();
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .as("partition %d: no slot skipped after %s", partition, slots.get(i - 1))
                    .isEqualTo(Duration.ofMillis(period));
        }
    }

    /**
     * Attack: a pool of ONE thread; one partition's run hogs it while a second member joins and the
     * balancer hands a partition over, so the other partition's slots come due late, past (or
     * across) its holder's term on this instance. RUN_ALL: every partition's slots are marked once
     * each, none skipped, whichever partition moved.
     */
    @Test
    void holdsOnePartitionsLongRunOnASingleThreadDelaysAnotherAcrossAHandOver() throws Exception {
        int partitions = 2;
        Node a = node("a", partitions, 1, Hogging.class).start();
        assertThat(blocked.await(20, TimeUnit.SECONDS)).isTrue();
        Node b = node("b", partitions, 1, Hogging.class).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> !b.election.owned().isEmpty());
        int moved = b.election.owned().first();
        await().atMost(Duration.ofSeconds(20)).until(() -> markedIn(moved, "b") >= 2);
        release.countDown();
        awaitProgress("b", partitions, 0);
        int kept = 1 - moved;
        await().atMost(Duration.ofSeconds(20)).until(() -> a.election.owned().contains(kept));
        long before = markedIn(kept, "a") + markedIn(kept, "b");
        await().atMost(Duration.ofSeconds(20))
                .until(() -> markedIn(kept, "a") + markedIn(kept, "b") >= before + 3);
        assertThat(unmatched).isEmpty();
        assertContiguous(0, PERIOD);
        assertContiguous(1, PERIOD);
        assertThat(marked)
                .allMatch(
                        r ->
                                r.instance()
                                        .equals(
                                                r.partition() == moved
                                                        ? (r.token() > 1 ? "b" : "a")
                                                        : r.instance()));
    }

    /**
     * Attack: RUN_ALL with maxCatchUp = 1 across a lapse: the new holder runs at most one missed
     * slot of each lapsed partition, and every slot it drops is counted as missed.
     */
    @Test
    void holdsRunAllWithMaxCatchUpOneAcrossALapseRunsOneAndCountsTheRest() {
        int partitions = 2;
        ttl = Duration.ofSeconds(3); // a lapse of about six periods
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        Node a =
                new Node(
                        "a",
                        templates.on(proxy.host(), proxy.port(), null, Duration.ofMillis(500)),
                        partitions,
                        2,
                        RunAllMaxOne.class);
        nodes.add(a);
        a.start();
        awaitProgress("a", partitions, 2);
        Node b = node("b", partitions, 2, RunAllMaxOne.class).start();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("b")));
        java.util.Set<Integer> lapsing = Set.copyOf(a.election.owned());
        assertThat(lapsing).isNotEmpty();
        long missedBefore = missed.get();
        proxy.drop();
        await().atMost(Duration.ofSeconds(20)).until(() -> b.election.owned().size() == partitions);
        awaitProgress("b", partitions, 2);
        long gaps = 0;
        for (int p : lapsing) {
            Instant lastByA =
                    marked.stream()
                            .filter(r -> r.partition() == p && r.instance().equals("a"))
                            .map(Ran::slot)
                            .max(Instant::compareTo)
                            .orElseThrow();
            List<Ran> byB =
                    marked.stream()
                            .filter(r -> r.partition() == p && r.instance().equals("b"))
                            .sorted(java.util.Comparator.comparing(Ran::slot))
                            .toList();
            assertThat(byB.stream().filter(Ran::catchUp).count())
                    .as("partition %d's catch-up runs on b", p)
                    .isLessThanOrEqualTo(1);
            gaps += Duration.between(lastByA, byB.get(0).slot()).toMillis() / PERIOD - 1;
            assertThat(markedSlots(p)).doesNotHaveDuplicates().isSorted();
        }
        assertThat(unmatched).isEmpty();
        assertThat(gaps).as("the lapse left slots to drop").isGreaterThan(1);
        assertThat(missed.get() - missedBefore)
                .as("dropped slots of the lapsed partitions %s: %d", lapsing, gaps)
                .isGreaterThanOrEqualTo(gaps);
    }

    /** Attack: a cron trigger per partition across a graceful hand-over; RUN_ALL. */
    @Test
    void holdsCronPerPartitionAcrossAGracefulHandOver() {
        int partitions = 2;
        Node a = node("a", partitions, 2, Cron.class).start();
        awaitProgress("a", partitions, 2);
        Node b = node("b", partitions, 2, Cron.class).start();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("b")));
        a.close();
        nodes.remove(a);
        awaitProgress("b", partitions, 2);
        assertThat(unmatched).isEmpty();
        assertContiguous(0, 1000);
        assertContiguous(1, 1000);
        assertThat(marked).allMatch(r -> r.slot().getNano() == 0);
    }

    /**
     * Attack: a fixedDelay trigger per partition across a graceful hand-over: a partition's next
     * slot is never sooner than one delay after its previous marked slot, on any holder.
     */
    @Test
    void holdsFixedDelayPerPartitionAcrossAGracefulHandOver() {
        int partitions = 2;
        Node a = node("a", partitions, 2, Delay.class).start();
        awaitProgress("a", partitions, 2);
        Node b = node("b", partitions, 2, Delay.class).start();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("b")));
        a.close();
        nodes.remove(a);
        awaitProgress("b", partitions, 2);
        assertThat(unmatched).isEmpty();
        assertDelayHeld(partitions);
    }

    /**
     * The same when the new holder's jobs hear of its term late: its follower links keep firing
     * meanwhile (every delay, on its own clock) and find it leading; the first of them used to run
     * at once, right after the catch-up of the previous holder's last completion (two runs 71 ms
     * apart when the lane took 700 ms). A follower's link is not a slot: the delay counts from the
     * last completion on any instance.
     */
    @Test
    void holdsFixedDelayWhenTheNewHoldersJobsHearOfItsTermLate() {
        int partitions = 2;
        Node a = node("a", partitions, 2, Delay.class).start();
        awaitProgress("a", partitions, 2);
        Node b = node("b", partitions, 2, Delay.class);
        // Longer than a delay, so that at least one follower link comes while b's jobs wait.
        b.lateAssignment = Duration.ofMillis(3 * PERIOD);
        b.start();
        a.close();
        nodes.remove(a);
        awaitProgress("b", partitions, 2);
        assertThat(unmatched).isEmpty();
        assertDelayHeld(partitions);
    }

    /** Asserts that each partition's marked slots are at least one delay apart, in order. */
    private void assertDelayHeld(int partitions) {
        for (int p = 0; p < partitions; p++) {
            List<Instant> slots = markedSlots(p);
            assertThat(slots).doesNotHaveDuplicates().isSorted();
            for (int i = 1; i < slots.size(); i++) {
                assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                        .as("partition %d after %s", p, slots.get(i - 1))
                        .isGreaterThanOrEqualTo(Duration.ofMillis(PERIOD));
            }
        }
    }

    /**
     * Control for {@link #aPartitionAssignedBeforeSpringSchedulesTheJobKeepsItsTermsOwnSlots}: the
     * same slow start with a job of ONE election keeps the slots that came due after its election
     * (SlotJobs.observer records the election even before the job is scheduled).
     */
    @Test
    void holdsControlSingleElectionWonBeforeSchedulingKeepsItsOwnSlots() {
        Queue<String> runs = new ConcurrentLinkedQueue<>();
        SlotInstance a = new SlotInstance(templates.on(server), name, "a", Duration.ZERO);
        a.with(SingleSkipping.class).start();
        a.jobs()
                .addListener(
                        (job, slot, result, count) -> {
                            if (result == SlotJobs.Result.RUN
                                    || result == SlotJobs.Result.CAUGHT_UP) {
                                runs.add("a@" + slot);
                            }
                        });
        await().atMost(Duration.ofSeconds(20)).until(() -> runs.size() >= 2);
        a.close();
        List<Instant> byB = new java.util.concurrent.CopyOnWriteArrayList<>();
        SlotInstance b = new SlotInstance(templates.on(server), name, "b", Duration.ZERO);
        AtomicReference<Instant> electedAt = new AtomicReference<>();
        b.context.registerBean(
                SlowStart.class,
                () ->
                        new SlowStart(
                                () -> {
                                    b.jobs()
                                            .addListener(
                                                    (job, slot, result, count) -> {
                                                        if (result == SlotJobs.Result.RUN
                                                                || result
                                                                        == SlotJobs.Result
                                                                                .CAUGHT_UP) {
                                                            byB.add(slot);
                                                        }
                                                    });
                                    b.elector.start();
                                    await().atMost(Duration.ofSeconds(20))
                                            .until(() -> b.electedAt > 0);
                                    electedAt.set(Instant.ofEpochMilli(b.electedAt));
                                    await().pollDelay(Duration.ofMillis(4 * PERIOD))
                                            .until(() -> true);
                                }));
        b.with(SingleSkipping.class);
        b.context.refresh();
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> byB.size() >= 2);
            assertThat(byB.get(0)).isBeforeOrEqualTo(electedAt.get().plusMillis(PERIOD));
        } finally {
            b.close();
        }
    }

    /**
     * Attack: 64 partitions on ONE thread whose runs cannot keep up (20 ms each, 64 x 5 slots/s
     * demanded, about 50 runs/s possible). No partition starves, and every slot skipped between a
     * partition's marked ones is counted as missed.
     */
    @Test
    void holdsSixtyFourOverloadedPartitionsOnOneThreadNeitherStarveNorDropSilently() {
        int partitions = 64;
        node("a", partitions, 1, SlowFast.class).start();
        awaitProgress("a", partitions, 6);
        long counted = missed.get(); // read first: later drops only add to it
        long gaps = 0;
        for (int p = 0; p < partitions; p++) {
            List<Instant> slots = markedSlots(p);
            assertThat(slots).as("partition %d", p).doesNotHaveDuplicates().isSorted();
            for (int i = 1; i < slots.size(); i++) {
                gaps += Duration.between(slots.get(i - 1), slots.get(i)).toMillis() / FAST - 1;
            }
        }
        assertThat(unmatched).isEmpty();
        assertThat(gaps).as("the overload skipped slots").isPositive();
        assertThat(counted)
                .as("slots skipped between marked ones: %d", gaps)
                .isGreaterThanOrEqualTo(gaps);
    }

    /**
     * Attack: an exception in one partition's run under RUN_ALL: it runs again, before the next.
     */
    @Test
    void holdsExceptionInOnePartitionsRunIsRetriedUnderRunAll() {
        int partitions = 2;
        node("a", partitions, 2, ThrowingRunAll.class).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> THREW.get() != null);
        awaitProgress("a", partitions, 2);
        assertThat(markedSlots(1)).contains(THREW.get());
        assertContiguous(0, PERIOD);
        assertContiguous(1, PERIOD);
        assertThat(missed.get()).isZero();
        assertThat(unmatched).isEmpty();
    }

    /**
     * Attack: the endpoint's and the lag gauge's per-partition views after a graceful hand-over:
     * one view per partition, named after the partition's election, holding its ledger; lag NaN on
     * an instance that holds no partition, finite on the holder.
     */
    @Test
    void holdsPerPartitionViewsAndLagAfterAHandOver() {
        int partitions = 2;
        Node a = node("a", partitions, 2, RunAll.class).start();
        awaitProgress("a", partitions, 2);
        Node b = node("b", partitions, 2, RunAll.class).start();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("b")));
        a.election.close(); // a stays up, holding nothing
        await().atMost(Duration.ofSeconds(20)).until(() -> b.election.owned().size() == partitions);
        awaitProgress("b", partitions, 2);
        String id = "partitionedOncePerSlotReviewTests.RunAll.run";
        assertThat(a.jobs().lagSeconds(id)).isNaN();
        assertThat(b.jobs().lagSeconds(id)).isBetween(0.0, 2.0 * PERIOD / 1000);
        Instant[] latest = new Instant[partitions];
        for (int p = 0; p < partitions; p++) {
            List<Instant> slots = markedSlots(p);
            latest[p] = slots.get(slots.size() - 1);
        }
        List<SlotJobs.JobView> views = a.jobs().jobs();
        assertThat(views).hasSize(partitions);
        for (int p = 0; p < partitions; p++) {
            SlotJobs.JobView view = views.get(p);
            assertThat(view.job()).isEqualTo(id);
            assertThat(view.election()).isEqualTo(PartitionedElection.electionName(name, p));
            assertThat(view.lastCompletedSlot()).isAfterOrEqualTo(latest[p]);
            SlotLedger ledger = new SlotLedger(b.election.elector(p), id);
            assertThat(view.lastCompletedSlot()).isBeforeOrEqualTo(ledger.read().completedSlot());
        }
        assertContiguous(0, PERIOD);
        assertContiguous(1, PERIOD);
    }
}
