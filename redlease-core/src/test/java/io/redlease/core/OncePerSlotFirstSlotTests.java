package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * The first run ever of a {@code fixedRate} once-per-slot job is cut short before any slot is
 * marked: the successor counts the slots from the same start, so it runs that slot (or, under SKIP,
 * counts it missed) instead of losing it.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotFirstSlotTests {

    /** Slots whose run started, by instance: "a@slot". */
    static final Collection<String> STARTED = new ConcurrentLinkedQueue<>();

    /** Slots whose run returned normally, by instance: "b@slot", with whether it caught up. */
    static final Collection<String> RAN = new ConcurrentLinkedQueue<>();

    /** Counts down when the first run starts; that run blocks until its term ends. */
    static volatile CountDownLatch firstStarted = new CountDownLatch(1);

    private final Templates templates = new Templates();

    private final List<SlotInstance> instances = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        STARTED.clear();
        RAN.clear();
        firstStarted = new CountDownLatch(1);
    }

    @AfterEach
    void tearDown() {
        instances.forEach(SlotInstance::close);
        templates.close();
    }

    /** An hourly rate: the first slot is the only one due while the test runs. */
    abstract static class Hourly {

        final LeadershipContext leadership;

        final String instance;

        Hourly(LeadershipContext leadership, String instanceId) {
            this.leadership = leadership;
            this.instance = instanceId;
        }

        void run() throws InterruptedException {
            Slot slot = leadership.slot().orElseThrow();
            STARTED.add(instance + "@" + slot.time());
            if (firstStarted.getCount() > 0) {
                firstStarted.countDown();
                // Held until the term ends and interrupts it: the run is cut short, unmarked.
                new CountDownLatch(1).await(30, TimeUnit.SECONDS);
            }
            RAN.add(instance + "@" + slot.time() + (slot.catchUp() ? " catch-up" : ""));
        }
    }

    static class RunAll extends Hourly {
        RunAll(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 3_600_000, initialDelay = 2_000)
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void job() throws InterruptedException {
            run();
        }
    }

    static class RunLatest extends Hourly {
        RunLatest(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 3_600_000, initialDelay = 2_000)
        @LeaderOnly(oncePerSlot = true)
        public void job() throws InterruptedException {
            run();
        }
    }

    static class Skip extends Hourly {
        Skip(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 3_600_000, initialDelay = 2_000)
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.SKIP)
        public void job() throws InterruptedException {
            run();
        }
    }

    private static String ledgerOf(String name, Class<?> job) {
        return name + ":slots:oncePerSlotFirstSlotTests." + job.getSimpleName() + ".job";
    }

    /**
     * Starts a leading, then schedules its job: its first slot comes two seconds later, after a's
     * term began, so a runs it. The run blocks; b starts; a stops at once, cutting the run short.
     *
     * @return the slot a's cut run was for, and b (now leading)
     */
    private Map.Entry<Instant, SlotInstance> cutFirstRun(
            Class<?> job, Collection<Long> missedByB, Collection<Instant> missedAtByB)
            throws InterruptedException {
        SlotInstance a = new SlotInstance(redis, name, "a", Duration.ZERO).with(job);
        instances.add(a);
        a.elector.start();
        await().atMost(Duration.ofSeconds(10)).until(a.elector::isLeader);
        a.context.refresh();
        assertThat(firstStarted.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(STARTED).hasSize(1).allMatch(s -> s.startsWith("a@"));
        Instant cut = Instant.parse(STARTED.iterator().next().substring(2));

        SlotInstance b = new SlotInstance(redis, name, "b", Duration.ZERO).with(job);
        instances.add(b);
        b.context.refresh();
        b.jobs()
                .addListener(
                        (id, slot, result, count) -> {
                            if (result == SlotJobs.Result.MISSED) {
                                missedAtByB.add(slot);
                                missedByB.add(count);
                            }
                        });
        b.elector.start();
        // Ends a's term at once: the run in flight is interrupted and not marked.
        assertThat(a.elector.stop(Duration.ZERO)).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(b.elector::isLeader);
        return Map.entry(cut, b);
    }

    @Test
    void runAllRunsTheFirstSlotCutShortOnTheSuccessor() throws InterruptedException {
        Instant cut = cutFirstRun(RunAll.class, new ArrayList<>(), new ArrayList<>()).getKey();
        await().atMost(Duration.ofSeconds(10)).until(() -> !RAN.isEmpty());
        assertThat(RAN).containsExactly("b@" + cut + " catch-up");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> redis.opsForHash().get(ledgerOf(name, RunAll.class), "slot") != null);
        assertThat(redis.opsForHash().entries(ledgerOf(name, RunAll.class)))
                .containsEntry("slot", Long.toString(cut.toEpochMilli()))
                .containsEntry("epoch", Long.toString(cut.toEpochMilli()));
    }

    @Test
    void theDefaultPolicyRunsTheFirstSlotCutShortOnTheSuccessor() throws InterruptedException {
        Collection<Long> missed = new ConcurrentLinkedQueue<>();
        Instant cut = cutFirstRun(RunLatest.class, missed, new ArrayList<>()).getKey();
        await().atMost(Duration.ofSeconds(10)).until(() -> !RAN.isEmpty());
        assertThat(RAN).containsExactly("b@" + cut + " catch-up");
        assertThat(missed).isEmpty();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                redis.opsForHash().get(ledgerOf(name, RunLatest.class), "slot")
                                        != null);
        assertThat(redis.opsForHash().get(ledgerOf(name, RunLatest.class), "slot"))
                .isEqualTo(Long.toString(cut.toEpochMilli()));
    }

    @Test
    void skipCountsTheFirstSlotCutShortAsMissed() throws InterruptedException {
        Collection<Long> missed = new ConcurrentLinkedQueue<>();
        Collection<Instant> missedAt = new ConcurrentLinkedQueue<>();
        Map.Entry<Instant, SlotInstance> cut = cutFirstRun(Skip.class, missed, missedAt);
        SlotInstance b = cut.getValue();
        // b's next run is an hour away: either b counts the cut slot missed, or (the defect) it
        // runs a slot of its own start, two seconds after it was scheduled.
        await().atMost(Duration.ofSeconds(10)).until(() -> !missed.isEmpty() || !RAN.isEmpty());
        assertThat(RAN).isEmpty();
        assertThat(missed).containsExactly(1L);
        assertThat(missedAt).containsExactly(cut.getKey());
        assertThat(b.elector.isLeader()).isTrue();
        assertThat(redis.opsForHash().get(ledgerOf(name, Skip.class), "epoch"))
                .isEqualTo(Long.toString(cut.getKey().toEpochMilli()));
    }
}
