package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * {@code @LeaderOnly(partitions, oncePerSlot = true)}: each partition is a once-per-slot job of its
 * own, with its own ledger beside the partition's keys, run only inside that partition's term.
 * Several instances hand partitions over gracefully and by a lapse; every partition's slots are
 * marked exactly once each, with none skipped (RUN_ALL), and a run cut short by its partition's
 * lapse is not marked.
 */
@ExtendWith(RedisExtension.class)
class PartitionedOncePerSlotTests {

    private static final int PARTITIONS = 4;

    private static final long PERIOD = 500;

    /** Every run whose method returned, on any instance. */
    static final Queue<Ran> RUNS = new ConcurrentLinkedQueue<>();

    /** The run a scheduler thread did last, for the listener that hears its outcome there. */
    static final ThreadLocal<Ran> LAST = new ThreadLocal<>();

    static volatile CountDownLatch started = new CountDownLatch(1);

    private final Templates templates = new Templates();

    private final List<Node> nodes = new ArrayList<>();

    private final List<TcpProxy> proxies = new ArrayList<>();

    /** Every slot marked, with the run that did it. */
    private final Queue<Ran> marked = new ConcurrentLinkedQueue<>();

    /** Every slot whose run failed, by instance. */
    private final Queue<String> failed = new ConcurrentLinkedQueue<>();

    /** Every run that returned and then failed (cut short, or its mark's outcome unknown). */
    private final Queue<Ran> failedRuns = new ConcurrentLinkedQueue<>();

    /** How many slots were dropped as missed, on any instance. */
    private final java.util.concurrent.atomic.AtomicLong missed =
            new java.util.concurrent.atomic.AtomicLong();

    /** Outcomes the listener could not match to the run on its thread: must stay empty. */
    private final Queue<String> unmatched = new ConcurrentLinkedQueue<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
        RUNS.clear();
        started = new CountDownLatch(1);
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
        proxies.forEach(TcpProxy::close);
        templates.close();
    }

    record Ran(String instance, int partition, Instant slot, String job, boolean cutShort) {}

    /** A job that records, per run, the partition and slot bound to it. */
    static class Job {

        final LeadershipContext leadership;

        final String instance;

        Job(LeadershipContext leadership, String instanceId) {
            this.leadership = leadership;
            this.instance = instanceId;
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

        void record(boolean cutShort) {
            Slot slot = leadership.slot().orElseThrow();
            int partition = leadership.partition().orElseThrow();
            Ran ran = new Ran(instance, partition, slot.time(), slot.job(), cutShort);
            LAST.set(ran);
            RUNS.add(ran);
        }
    }

    /**
     * The same job, whose second run blocks until its term ends and interrupts it (after the first
     * is marked, so that the ledger holds the slots' phase for the next holder).
     */
    static class Blocking extends Job {

        Blocking(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Override
        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 100)
        public void run() {
            boolean cutShort = false;
            if (RUNS.size() == 1 && started.getCount() > 0) {
                started.countDown();
                try {
                    new CountDownLatch(1).await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    cutShort = true; // the partition's term ended
                }
            }
            record(cutShort);
        }
    }

    /** The same job, whose first run ever blocks until its term ends: no slot is marked yet. */
    static class BlockingFirst extends Job {

        BlockingFirst(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Override
        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 100)
        public void run() {
            boolean cutShort = false;
            if (RUNS.isEmpty() && started.getCount() > 0) {
                started.countDown();
                try {
                    new CountDownLatch(1).await(30, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    cutShort = true; // the partition's term ended
                }
            }
            record(cutShort);
        }
    }

    /** The same job, dropping the slots missed before a term. */
    static class Skipping extends Job {

        Skipping(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Override
        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void run() {
            record(false);
        }
    }

    private static String jobId(Class<?> type) {
        return "partitionedOncePerSlotTests." + type.getSimpleName() + ".run";
    }

    /** One application instance: a partitioned election "orders" and a scheduling context. */
    final class Node implements AutoCloseable {

        final String id;

        final PartitionedElection election;

        final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();

        Node(String id, StringRedisTemplate redis, int partitions, Class<?> job) {
            this.id = id;
            context.registerBean(
                    "taskScheduler",
                    org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler.class,
                    () -> SlotInstance.scheduler(id, Duration.ZERO, 2));
            this.election =
                    new PartitionedElection(
                            redis,
                            PartitionedElectionConfig.builder(name, partitions)
                                    .instanceId(id)
                                    .ttl(Duration.ofSeconds(1))
                                    .listener(
                                            new io.redlease.core.partition.PartitionListener() {
                                                @Override
                                                public void onAssigned(int partition, long token) {
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
                failed.add(id + "@" + slot);
                if (ran != null && ran.slot().equals(slot)) {
                    failedRuns.add(ran);
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

    private Node node(String id, Class<?> job) {
        Node node = new Node(id, templates.on(server), PARTITIONS, job);
        nodes.add(node);
        return node.start();
    }

    private Node proxiedNode(String id, TcpProxy proxy, int partitions, Class<?> job) {
        Node node =
                new Node(
                        id,
                        templates.on(proxy.host(), proxy.port(), null, Duration.ofMillis(500)),
                        partitions,
                        job);
        nodes.add(node);
        return node.start();
    }

    private TcpProxy proxy() {
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        return proxy;
    }

    private long markedIn(int partition, String instance) {
        return marked.stream()
                .filter(r -> r.partition() == partition && r.instance().equals(instance))
                .count();
    }

    /** Waits until each partition has two more slots marked by the instance than it had. */
    private void awaitProgressOn(String instance) {
        long[] before = new long[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            before[p] = markedIn(p, instance);
        }
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> {
                            for (int p = 0; p < PARTITIONS; p++) {
                                assertThat(markedIn(p, instance))
                                        .as("slots of partition %d marked by %s", p, instance)
                                        .isGreaterThanOrEqualTo(before[p] + 2);
                            }
                        });
    }

    @Test
    void everyPartitionsSlotsAreMarkedOnceEachAcrossGracefulAndLapsedHandOvers() {
        Node a = node("a", Job.class);
        Node b = node("b", Job.class);
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> {
                            for (int p = 0; p < PARTITIONS; p++) {
                                int partition = p;
                                assertThat(marked).anyMatch(r -> r.partition() == partition);
                            }
                            assertThat(marked).extracting(Ran::instance).contains("a", "b");
                        });

        // Graceful: b leaves, a takes its partitions over and catches up what they missed.
        b.close();
        awaitProgressOn("a");

        // A member joins, then is cut off: its partitions lapse back to a.
        TcpProxy proxy = proxy();
        Node c = proxiedNode("c", proxy, PARTITIONS, Job.class);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("c")));
        proxy.drop();
        await().atMost(Duration.ofSeconds(20)).until(() -> a.election.owned().size() == PARTITIONS);
        awaitProgressOn("a");

        assertThat(unmatched).isEmpty();
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            List<Instant> slots =
                    marked.stream()
                            .filter(r -> r.partition() == partition)
                            .map(Ran::slot)
                            .collect(Collectors.toList());
            assertThat(slots).as("partition %d's marked slots", p).doesNotHaveDuplicates();
            assertThat(slots).as("partition %d's marked slots", p).isSorted();
            // A mark whose reply the cut-off dropped may have landed though c counted it failed:
            // such a slot is complete without a run this test saw marked.
            java.util.TreeSet<Instant> done = new java.util.TreeSet<>(slots);
            failedRuns.stream()
                    .filter(r -> r.partition() == partition && r.instance().equals("c"))
                    .forEach(r -> done.add(r.slot()));
            List<Instant> complete = List.copyOf(done.headSet(slots.get(slots.size() - 1), true));
            for (int i = 1; i < complete.size(); i++) {
                assertThat(Duration.between(complete.get(i - 1), complete.get(i)))
                        .as("partition %d: no slot skipped after %s", p, complete.get(i - 1))
                        .isEqualTo(Duration.ofMillis(PERIOD));
            }
            // The partition's own ledger, beside its keys, holds its latest marked slot.
            SlotLedger ledger = new SlotLedger(a.election.elector(p), jobId(Job.class));
            assertThat(ledger.key()).startsWith("{" + name + ":p" + p + "}:slots:");
            Instant completed = ledger.read().completedSlot();
            assertThat(completed).isNotNull();
            assertThat(completed).isAfterOrEqualTo(slots.get(slots.size() - 1));
        }
        assertThat(marked).extracting(Ran::job).containsOnly(jobId(Job.class));
        assertThat(marked).extracting(Ran::instance).contains("a", "b", "c");
        assertThat(c.election.owned()).isEmpty();
    }

    @Test
    void eachPartitionsNewHolderAppliesTheMissedSlotsPolicyToThatPartition() {
        TcpProxy proxy = proxy();
        Node a = proxiedNode("a", proxy, PARTITIONS, Skipping.class);
        awaitProgressOn("a");
        Node b = node("b", Skipping.class);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("b")));
        java.util.Set<Integer> lapsing = a.election.owned();
        assertThat(lapsing).isNotEmpty();
        Map<Integer, Instant> lastByA = new java.util.HashMap<>();
        proxy.drop();
        marked.stream()
                .filter(r -> r.instance().equals("a"))
                .forEach(
                        r ->
                                lastByA.merge(
                                        r.partition(), r.slot(), (x, y) -> x.isAfter(y) ? x : y));
        await().atMost(Duration.ofSeconds(20)).until(() -> b.election.owned().size() == PARTITIONS);
        awaitProgressOn("b");

        assertThat(unmatched).isEmpty();
        assertThat(missed.get()).isPositive();
        for (int p : lapsing) {
            // SKIP: the slots that came due while the partition lapsed are dropped, not caught up.
            Instant firstByB =
                    marked.stream()
                            .filter(r -> r.partition() == p && r.instance().equals("b"))
                            .map(Ran::slot)
                            .min(Instant::compareTo)
                            .orElseThrow();
            assertThat(Duration.between(lastByA.get(p), firstByB))
                    .as("partition %d's gap", p)
                    .isGreaterThan(Duration.ofMillis(PERIOD));
        }
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            assertThat(marked.stream().filter(r -> r.partition() == partition).map(Ran::slot))
                    .as("partition %d's marked slots", p)
                    .doesNotHaveDuplicates()
                    .isSorted();
        }
    }

    @Test
    void theFirstRunEverCutShortByALapseIsRunByTheNewHolderInTheSamePhase() throws Exception {
        TcpProxy proxy = proxy();
        Node a = proxiedNode("a", proxy, 1, BlockingFirst.class);
        assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
        // b is scheduled later, so its own timer counts the rate from another start.
        Node b = new Node("b", templates.on(server), 1, BlockingFirst.class);
        nodes.add(b);
        b.start();
        proxy.drop();

        await().atMost(Duration.ofSeconds(20)).until(() -> RUNS.stream().anyMatch(Ran::cutShort));
        Ran cut = RUNS.stream().filter(Ran::cutShort).findFirst().orElseThrow();
        assertThat(cut.instance()).isEqualTo("a");
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.instance().equals("b")));
        // RUN_ALL: b's first mark is a's cut slot, then whole periods from it.
        assertThat(marked).first().isEqualTo(new Ran("b", 0, cut.slot(), cut.job(), false));
        assertThat(marked).extracting(Ran::instance).containsOnly("b");
        assertThat(failed).contains("a@" + cut.slot());
        assertThat(unmatched).isEmpty();
        SlotLedger ledger = new SlotLedger(b.election.elector(0), jobId(BlockingFirst.class));
        assertThat(ledger.read().epoch()).isNotNull();
        assertThat(Duration.between(ledger.read().epoch(), cut.slot()).toMillis() % PERIOD)
                .isZero();
    }

    @Test
    void aRunCutShortByItsPartitionsLapseIsNotMarkedAndItsNewHolderRunsIt() throws Exception {
        TcpProxy proxy = proxy();
        Node a = proxiedNode("a", proxy, 1, Blocking.class);
        assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
        Node b = new Node("b", templates.on(server), 1, Blocking.class);
        nodes.add(b);
        b.start();
        proxy.drop();

        await().atMost(Duration.ofSeconds(20)).until(() -> RUNS.stream().anyMatch(Ran::cutShort));
        Ran cut = RUNS.stream().filter(Ran::cutShort).findFirst().orElseThrow();
        assertThat(cut.instance()).isEqualTo("a");
        assertThat(cut.partition()).isZero();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> marked.stream().anyMatch(r -> r.slot().equals(cut.slot())));

        assertThat(failed).contains("a@" + cut.slot());
        assertThat(marked)
                .filteredOn(r -> r.slot().equals(cut.slot()))
                .singleElement()
                .extracting(Ran::instance)
                .isEqualTo("b");
        assertThat(marked)
                .filteredOn(r -> r.instance().equals("a"))
                .extracting(Ran::slot)
                .containsExactly(RUNS.peek().slot());
        assertThat(marked).extracting(Ran::slot).doesNotHaveDuplicates();
        assertThat(unmatched).isEmpty();
        assertThat(a.election.owned()).isEmpty();
        // Called directly, outside its slots, the job refuses to run in the partition b holds.
        assertThatIllegalStateException()
                .isThrownBy(() -> b.context.getBean(Blocking.class).run())
                .withMessageContaining("runs only as one of its slots");
    }
}
