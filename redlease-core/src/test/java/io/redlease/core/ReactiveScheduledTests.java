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
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Reactive {@code @Scheduled} methods with {@code @LeaderOnly}: each subscription Spring makes is
 * checked, and once-per-slot jobs mark a slot only when their publisher completes inside the term.
 */
@ExtendWith(RedisExtension.class)
class ReactiveScheduledTests {

    /** Each completed run: instance, slot, and the slot and term its operators saw. */
    static final Queue<Run> RUNS = new ConcurrentLinkedQueue<>();

    /** Holds the first reactive run until released, or until its subscription is cancelled. */
    static volatile CountDownLatch release = new CountDownLatch(0);

    static final Queue<String> CANCELLED = new ConcurrentLinkedQueue<>();

    /** Counts down when the held run has started. */
    static volatile CountDownLatch started = new CountDownLatch(1);

    /** Whether a run has been held already: only the first one is. */
    static final AtomicBoolean held = new AtomicBoolean();

    private final Templates templates = new Templates();

    private final List<SlotInstance> instances = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        RUNS.clear();
        CANCELLED.clear();
        release = new CountDownLatch(0);
        started = new CountDownLatch(1);
        held.set(false);
        Hooks.enableAutomaticContextPropagation();
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        Hooks.disableAutomaticContextPropagation();
        instances.forEach(SlotInstance::close);
        templates.close();
    }

    record Run(String instance, String job, Instant slot, Instant slotInOperator, long token) {}

    private SlotInstance instance(String id, Class<?> job) {
        SlotInstance instance = new SlotInstance(redis, name, id, Duration.ZERO).with(job);
        instances.add(instance);
        return instance;
    }

    /** A reactive job on Spring's plain reactive scheduling. */
    static class PlainReactive {

        final LeadershipContext leadership;

        final String instance;

        PlainReactive(LeadershipContext leadership, String instanceId) {
            this.leadership = leadership;
            this.instance = instanceId;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly
        public Mono<Void> job() {
            return Mono.fromRunnable(
                            () ->
                                    RUNS.add(
                                            new Run(
                                                    instance,
                                                    "plain",
                                                    Instant.EPOCH,
                                                    Instant.EPOCH,
                                                    leadership
                                                            .boundTerm()
                                                            .map(Term::token)
                                                            .orElse(-1L))))
                    .subscribeOn(Schedulers.boundedElastic())
                    .then();
        }
    }

    @Test
    void aReactiveJobOfAnInstanceThatFollowedWhenItWasScheduledRunsOnceItLeads() {
        SlotInstance a = instance("a", PlainReactive.class);
        a.context.refresh();
        // Spring called the method when it scheduled it, while a did not lead.
        assertThat(a.elector.isLeader()).isFalse();
        a.elector.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        long token = a.elector.token().orElseThrow();
        assertThat(RUNS).allSatisfy(run -> assertThat(run.token()).isEqualTo(token));
    }

    /** A reactive once-per-slot job: a slot every second, seen in its operators. */
    static class ReactiveSlots {

        final LeadershipContext leadership;

        final String instance;

        ReactiveSlots(LeadershipContext leadership, String instanceId) {
            this.leadership = leadership;
            this.instance = instanceId;
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public Mono<Void> job() {
            Slot slot = leadership.slot().orElseThrow();
            return Mono.fromCallable(
                            () -> {
                                if (release.getCount() > 0 && held.compareAndSet(false, true)) {
                                    started.countDown();
                                    release.await();
                                }
                                return leadership.slot().orElseThrow();
                            })
                    .subscribeOn(Schedulers.boundedElastic())
                    .publishOn(Schedulers.parallel())
                    .doOnNext(
                            seen ->
                                    RUNS.add(
                                            new Run(
                                                    instance,
                                                    slot.job(),
                                                    slot.time(),
                                                    seen.time(),
                                                    leadership
                                                            .boundTerm()
                                                            .map(Term::token)
                                                            .orElse(-1L))))
                    .doOnCancel(() -> CANCELLED.add(slot.time().toString()))
                    .then();
        }
    }

    @Test
    void aReactiveOncePerSlotJobRunsEachSlotOnceAcrossAHandOffWithTheSlotInItsOperators() {
        SlotInstance a = instance("a", ReactiveSlots.class).start();
        SlotInstance b = instance("b", ReactiveSlots.class).start();
        for (int handOff = 0; handOff < 3; handOff++) {
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> a.elector.isLeader() || b.elector.isLeader());
            SlotInstance leader = a.elector.isLeader() ? a : b;
            int before = RUNS.size();
            await().atMost(Duration.ofSeconds(10))
                    .until(
                            () ->
                                    RUNS.stream()
                                            .skip(before)
                                            .anyMatch(run -> run.instance().equals(leader.id)));
            leader.elector.resign();
            await().atMost(Duration.ofSeconds(10)).until(() -> !leader.elector.isLeader());
        }
        int total = RUNS.size();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() > total + 1);
        instances.forEach(SlotInstance::close);
        List<Run> runs = new ArrayList<>(RUNS);
        assertThat(runs).allSatisfy(run -> assertThat(run.slotInOperator()).isEqualTo(run.slot()));
        assertThat(runs).allSatisfy(run -> assertThat(run.token()).isPositive());
        Map<Instant, List<Run>> bySlot =
                runs.stream()
                        .collect(
                                Collectors.groupingBy(
                                        Run::slot, TreeMap::new, Collectors.toList()));
        assertThat(bySlot.values()).allSatisfy(same -> assertThat(same).hasSize(1));
        List<Instant> slots = new ArrayList<>(bySlot.keySet());
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .isEqualTo(Duration.ofSeconds(1));
        }
        assertThat(runs.stream().map(Run::instance).distinct()).hasSize(2);
    }

    @Test
    void aReactiveRunCancelledByTheEndOfItsTermIsNotMarkedAndRunsAgain() throws Exception {
        release = new CountDownLatch(1);
        SlotInstance a = instance("a", ReactiveSlots.class).start();
        Queue<SlotJobs.Result> results = new ConcurrentLinkedQueue<>();
        a.jobs().addListener((job, slot, result, count) -> results.add(result));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        a.elector.resign();
        await().atMost(Duration.ofSeconds(10)).until(() -> !CANCELLED.isEmpty());
        Instant cut = Instant.parse(CANCELLED.peek());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> results.contains(SlotJobs.Result.FAILED));
        // Elected again, the instance runs the slot whose subscription was cancelled.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RUNS.stream().anyMatch(run -> run.slot().equals(cut)));
    }
}
