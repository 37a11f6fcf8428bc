package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;

/**
 * Hostile probes of reactive once-per-slot jobs: how runs that end in unusual ways are counted and
 * marked.
 */
@ExtendWith(RedisExtension.class)
class ReactiveSlotHostileTests {

    /** Counts down when the first run of a job has started. */
    static volatile CountDownLatch started = new CountDownLatch(1);

    /** Whether the first run has been made: only it runs until its term ends. */
    static final AtomicBoolean first = new AtomicBoolean();

    private final Templates templates = new Templates();

    private final List<SlotInstance> instances = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        started = new CountDownLatch(1);
        first.set(false);
        Hooks.enableAutomaticContextPropagation();
    }

    @AfterEach
    void tearDown() {
        Hooks.disableAutomaticContextPropagation();
        instances.forEach(SlotInstance::close);
        templates.close();
    }

    private SlotInstance instance(String id, Class<?>... components) {
        SlotInstance instance = new SlotInstance(redis, name, id, Duration.ZERO).with(components);
        instances.add(instance);
        return instance;
    }

    /** A leader-only flux of ticks, cut by the end of its term. */
    static class Ticks {

        @LeaderOnly
        public Flux<Long> ticks() {
            return Flux.interval(Duration.ofMillis(20));
        }
    }

    /** Its first run waits on ticks of its term, which the end of the term cuts. */
    static class WaitsOnTicks {

        final Ticks ticks;

        WaitsOnTicks(Ticks ticks) {
            this.ticks = ticks;
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true, interruptOnStepDown = false)
        public Mono<Void> job() {
            if (first.compareAndSet(false, true)) {
                started.countDown();
                return ticks.ticks().then();
            }
            return Mono.empty();
        }
    }

    @Test
    void aReactiveRunCutShortByTheEndOfItsTermCountsAsFailed() throws Exception {
        SlotInstance a = instance("a", Ticks.class, WaitsOnTicks.class);
        Queue<Map.Entry<Instant, SlotJobs.Result>> results = new ConcurrentLinkedQueue<>();
        a.start();
        a.jobs().addListener((job, slot, result, count) -> results.add(Map.entry(slot, result)));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(a.elector::isLeader);
        a.elector.resign();
        // The run started, its method returned a publisher, and the end of the term cut it: the
        // README counts such a run as failed.
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(
                        () ->
                                assertThat(results)
                                        .as("outcomes recorded after the first run was cut")
                                        .anyMatch(e -> e.getValue() == SlotJobs.Result.FAILED));
    }

    /** Completes empty at once. */
    static class CompletesEmpty {

        static final Queue<Instant> RUNS = new ConcurrentLinkedQueue<>();

        final LeadershipContext leadership;

        CompletesEmpty(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly(oncePerSlot = true)
        public Flux<String> job() {
            RUNS.add(leadership.slot().orElseThrow().time());
            return Flux.empty();
        }
    }

    @Test
    void aReactiveRunThatCompletesEmptyIsMarkedOnce() {
        CompletesEmpty.RUNS.clear();
        SlotInstance a = instance("a", CompletesEmpty.class);
        Queue<SlotJobs.Result> results = new ConcurrentLinkedQueue<>();
        a.start();
        a.jobs().addListener((job, slot, result, count) -> results.add(result));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> results.stream().filter(r -> r == SlotJobs.Result.RUN).count() >= 3);
        assertThat(results).doesNotContain(SlotJobs.Result.FAILED);
        assertThat(CompletesEmpty.RUNS).doesNotHaveDuplicates();
    }
}
