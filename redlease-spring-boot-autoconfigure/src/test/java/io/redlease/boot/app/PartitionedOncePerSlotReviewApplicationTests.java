package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
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
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * {@code @Scheduled @LeaderOnly(partitions, oncePerSlot = true)} in Boot applications: instances
 * join and leave a partitioned election while a fixed-rate job runs once per slot per partition;
 * every partition's slots are marked once each, none skipped, each run with its partition's term
 * and its slot bound.
 */
@ExtendWith(RedisExtension.class)
class PartitionedOncePerSlotReviewApplicationTests {

    static final int PARTITIONS = 4;

    static final long PERIOD = 500;

    static final String JOB = "orders.settle";

    /** The run a scheduler thread did last, for the listener that hears its outcome there. */
    static final ThreadLocal<Ran> LAST = new ThreadLocal<>();

    record Ran(String instance, int partition, Instant slot, String job, long token) {}

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SettlementApplication {

        @Bean
        Orders orders(LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
            return new Orders(leadership, id);
        }
    }

    /** The same job under SKIP, for the slow-start attack. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SkippingApplication {

        @Bean
        SkipOrders orders(
                LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
            return new SkipOrders(leadership, id);
        }

        /**
         * A slow start: a lifecycle bean in a late phase, started after the partitioned election
         * and before Spring schedules @Scheduled methods (on ContextRefreshedEvent).
         */
        @Bean
        @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty("review.slow")
        org.springframework.context.SmartLifecycle slowStart(Elections elections, SlotJobs jobs) {
            return new org.springframework.context.SmartLifecycle() {
                private volatile boolean running;

                @Override
                public void start() {
                    PartitionedElection orders = elections.partitioned("orders");
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> orders.owned().size() == PARTITIONS);
                    ASSIGNED_AT.set(Instant.now());
                    SCHEDULED_AT_ASSIGNMENT.set(jobs.jobs().size());
                    // Models the slow start itself, not a synchronisation.
                    await().pollDelay(Duration.ofMillis(4 * PERIOD)).until(() -> true);
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
                    return Integer.MAX_VALUE - 1;
                }
            };
        }
    }

    /** Partition job views listed when the slow start saw every partition held (0: unscheduled). */
    static final java.util.concurrent.atomic.AtomicInteger SCHEDULED_AT_ASSIGNMENT =
            new java.util.concurrent.atomic.AtomicInteger(-1);

    /** Every run of SkipOrders that returned, on any instance (seen even during startup). */
    static final Queue<Ran> SKIP_RUNS = new ConcurrentLinkedQueue<>();

    static final java.util.concurrent.atomic.AtomicReference<Instant> ASSIGNED_AT =
            new java.util.concurrent.atomic.AtomicReference<>();

    static class SkipOrders {

        private final LeadershipContext leadership;

        private final String instance;

        SkipOrders(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void settle() {
            Slot slot = leadership.slot().orElseThrow();
            int partition = leadership.partition().orElseThrow();
            long token = leadership.partitions("orders").boundTerm().orElseThrow().token();
            Ran ran = new Ran(instance, partition, slot.time(), slot.job(), token);
            LAST.set(ran);
            SKIP_RUNS.add(ran);
        }
    }

    static class Orders {

        private final LeadershipContext leadership;

        private final String instance;

        Orders(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @Scheduled(fixedRate = PERIOD)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 100)
        public void settle() {
            Slot slot = leadership.slot().orElseThrow();
            int partition = leadership.partition().orElseThrow();
            long token = leadership.partitions("orders").boundTerm().orElseThrow().token();
            LAST.set(new Ran(instance, partition, slot.time(), slot.job(), token));
        }
    }

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    /** Every slot marked, with the run that did it. */
    private final Queue<Ran> marked = new ConcurrentLinkedQueue<>();

    /** Outcomes the listener could not match to the run on its thread: must stay empty. */
    private final Queue<String> unmatched = new ConcurrentLinkedQueue<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-partition-slots-review:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id) {
        return instance(id, SettlementApplication.class, "review.none=true");
    }

    private ConfigurableApplicationContext instance(String id, Class<?> app, String extra) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(app)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.partitions.orders.count=" + PARTITIONS,
                                "redlease.partitions.orders.balance-interval=100ms",
                                "redlease.partitions.orders.settle=200ms",
                                "spring.task.scheduling.pool.size=2",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s",
                                extra)
                        .run();
        context.getBean(SlotJobs.class)
                .addListener(
                        (job, slot, result, count) -> {
                            if (result == SlotJobs.Result.SKIPPED
                                    || result == SlotJobs.Result.MISSED) {
                                return;
                            }
                            Ran ran = LAST.get();
                            LAST.remove();
                            if (result == SlotJobs.Result.FAILED) {
                                return;
                            }
                            if (ran == null
                                    || !ran.slot().equals(slot)
                                    || !ran.instance().equals(id)) {
                                unmatched.add(id + " " + result + " " + slot + " after " + ran);
                            } else {
                                marked.add(ran);
                            }
                        });
        instances.add(context);
        return context;
    }

    private static PartitionedElection orders(ConfigurableApplicationContext context) {
        return context.getBean(Elections.class).partitioned("orders");
    }

    private long markedBy(String instance) {
        return marked.stream().filter(r -> r.instance().equals(instance)).count();
    }

    /** Waits until every partition has two more slots marked than it had. */
    private void awaitProgress() {
        long[] before = new long[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            before[p] = marked.stream().filter(r -> r.partition() == partition).count();
        }
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> {
                            for (int p = 0; p < PARTITIONS; p++) {
                                int partition = p;
                                assertThat(marked.stream().filter(r -> r.partition() == partition))
                                        .as("slots marked in partition %d", p)
                                        .hasSizeGreaterThanOrEqualTo((int) before[p] + 2);
                            }
                        });
    }

    /**
     * Attack: Boot context stop/start. The partitioned election and the scheduler are lifecycle
     * beans: after a restart every partition is held again and its schedule runs its slots, each
     * marked once, none skipped (RUN_ALL) across the stop.
     */
    @Test
    void holdsPerPartitionSchedulesComeBackAfterContextStopAndStart() {
        ConfigurableApplicationContext a = instance("a");
        awaitProgress();
        a.stop();
        assertThat(orders(a).owned()).as("partitions held while stopped").isEmpty();
        a.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> orders(a).owned().size() == PARTITIONS);
        awaitProgress();
        awaitProgress();
        assertThat(unmatched).isEmpty();
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            List<Instant> slots =
                    marked.stream()
                            .filter(r -> r.partition() == partition)
                            .map(Ran::slot)
                            .collect(Collectors.toList());
            assertThat(slots).as("partition %d", p).doesNotHaveDuplicates().isSorted();
            for (int i = 1; i < slots.size(); i++) {
                assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                        .as("partition %d: no slot skipped after %s", p, slots.get(i - 1))
                        .isEqualTo(Duration.ofMillis(PERIOD));
            }
        }
    }

    /**
     * Attack: in Boot the partitioned election is a lifecycle bean, started before Spring
     * schedules @Scheduled methods (on ContextRefreshedEvent). A slow start between the two: the
     * partitions are assigned, then the job is scheduled 2 s later. README: an election won before
     * Spring scheduled the job counts from the election, so under SKIP the slots due after the
     * assignment are the term's own and run. It failed before the fix: SlotCatchUp's onAssigned
     * reached PartitionSlotJobs.catchUp while the template had no partition jobs yet, so the time
     * of the assignment was lost and SKIP dropped those slots (logged "drops ... missed").
     */
    @Test
    void bootPartitionsAssignedBeforeSchedulingKeepTheirTermsOwnSlotsUnderSkip() {
        ConfigurableApplicationContext a =
                instance("a", SkippingApplication.class, "review.none=true");
        awaitProgress(); // the ledgers hold the rate's phase
        a.close();
        instances.remove(a);
        ASSIGNED_AT.set(null);
        SKIP_RUNS.clear();
        instance("b", SkippingApplication.class, "review.slow=true");

        awaitProgress();
        Instant assignedAt = ASSIGNED_AT.get();
        assertThat(assignedAt).isNotNull();
        assertThat(SCHEDULED_AT_ASSIGNMENT.get()).as("job views when assigned").isZero();
        assertThat(unmatched).isEmpty();
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            Instant firstByB =
                    SKIP_RUNS.stream()
                            .filter(r -> r.partition() == partition && r.instance().equals("b"))
                            .map(Ran::slot)
                            .min(Instant::compareTo)
                            .orElseThrow();
            assertThat(firstByB)
                    .as(
                            "partition %d: b's first run's slot (assigned by %s, scheduled 2 s later)",
                            p, assignedAt)
                    .isBeforeOrEqualTo(assignedAt.plusMillis(PERIOD));
        }
    }
}
