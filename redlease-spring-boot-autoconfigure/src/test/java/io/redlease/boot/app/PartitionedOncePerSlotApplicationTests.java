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
class PartitionedOncePerSlotApplicationTests {

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
                "redlease-partition-slots:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(SettlementApplication.class)
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
                                "spring.lifecycle.timeout-per-shutdown-phase=5s")
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

    @Test
    void eachPartitionsSlotsRunOnceAsMembersJoinAndLeave() {
        ConfigurableApplicationContext a = instance("a");
        awaitProgress();

        // A member joins: partitions are handed over to it gracefully, and run there.
        instance("b");
        await().atMost(Duration.ofSeconds(20)).until(() -> markedBy("b") > 0);
        awaitProgress();

        // A member leaves: its partitions move back, and catch up what they missed.
        a.close();
        instances.remove(a);
        awaitProgress();
        assertThat(orders(instances.get(0)).owned()).hasSize(PARTITIONS);

        assertThat(unmatched).isEmpty();
        assertThat(marked).extracting(Ran::job).containsOnly(JOB);
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            List<Ran> runs = marked.stream().filter(r -> r.partition() == partition).toList();
            List<Instant> slots = runs.stream().map(Ran::slot).toList();
            assertThat(slots).as("partition %d's marked slots", p).doesNotHaveDuplicates();
            assertThat(slots).as("partition %d's marked slots", p).isSorted();
            for (int i = 1; i < slots.size(); i++) {
                assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                        .as("partition %d: no slot skipped after %s", p, slots.get(i - 1))
                        .isEqualTo(Duration.ofMillis(PERIOD));
                // A later holder's runs carry a later term of the partition.
                assertThat(runs.get(i).token()).isGreaterThanOrEqualTo(runs.get(i - 1).token());
            }
        }
        // The endpoint's view: one ledger per partition, beside the partition's keys.
        ConfigurableApplicationContext b = instances.get(0);
        List<SlotJobs.JobView> views =
                b.getBean(SlotJobs.class).jobs().stream()
                        .filter(view -> view.job().equals(JOB))
                        .toList();
        assertThat(views)
                .extracting(SlotJobs.JobView::election)
                .containsExactly(
                        java.util.stream.IntStream.range(0, PARTITIONS)
                                .mapToObj(p -> orders(b).electionName(p))
                                .toArray(String[]::new));
        assertThat(views).allSatisfy(view -> assertThat(view.lastCompletedSlot()).isNotNull());
    }
}
