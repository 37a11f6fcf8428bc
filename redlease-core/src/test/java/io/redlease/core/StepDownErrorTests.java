package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Errors inside a step-down (a throwable escaping the engine's own code, here from the clock or the
 * callback executor at chosen frames): the term still ends, its lease is still released, its
 * step-down is still reported, and the run contends again without overlapping terms. From a hostile
 * review of the error paths.
 */
@ExtendWith(RedisExtension.class)
class StepDownErrorTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final ExecutorService callbacks = Executors.newCachedThreadPool();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        callbacks.shutdownNow();
        templates.close();
    }

    /**
     * The callback executor throws (not a rejection) as a resign hands the before-release hooks to
     * the lane: the hooks were counted but never called, the release waited for them until the
     * drain timeout (a minute here) after the task had returned, and the lane stopped for good
     * (every later callback of the election lost, onSteppedDown among them). The lane now runs such
     * a turn on the engine's callback pool.
     */
    @Test
    void aCallbackExecutorThatFailsHoldsNeitherTheReleaseNorTheCallbacks() throws Exception {
        Recorder recorder = new Recorder();
        AtomicBoolean armed = new AtomicBoolean();
        AtomicBoolean threw = new AtomicBoolean();
        Executor executor =
                runnable -> {
                    if (armed.get() && Stacks.onStack(ReleaseHooks.class, "call")) {
                        armed.set(false);
                        threw.set(true);
                        throw new IllegalStateException("test: the executor fails");
                    }
                    callbacks.execute(runnable);
                };
        CountDownLatch finish = new CountDownLatch(1);
        AtomicInteger hookCalls = new AtomicInteger();
        Elector a =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(30))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .drainTimeout(Duration.ofSeconds(60))
                                .callbackExecutor(executor)
                                .beforeRelease(
                                        term -> {
                                            hookCalls.incrementAndGet();
                                            return CompletableFuture.completedFuture(null);
                                        })
                                .observer(recorder)
                                .build());
        electors.add(a);
        a.start(
                term -> {
                    while (true) {
                        try {
                            finish.await();
                            return;
                        } catch (InterruptedException ex) {
                            // Ignores the term's end until the test lets it return.
                        }
                    }
                });
        recorder.await("elected", 1);
        await().until(a::stepsIdle);
        armed.set(true);
        a.resign();
        await().atMost(Duration.ofSeconds(5)).untilTrue(threw);
        await().atMost(Duration.ofSeconds(5)).until(() -> hookCalls.get() == 1);
        assertThat(redis.opsForValue().get(name + ":leader")).isEqualTo("a");
        finish.countDown();
        // Released once the task returned, not at the drain timeout.
        await().atMost(Duration.ofSeconds(20))
                .until(() -> redis.opsForValue().get(name + ":leader") == null);
        recorder.await("steppedDown", 1);
        assertThat(recorder.errors(Operation.INTERNAL)).isEmpty();
    }

    /**
     * A step of a leader fails (the clock throws in a renewal timer), and the recovery fails too
     * (the clock throws again as the term ends). The last resort dropped the term without a release
     * and without reporting its step-down, and contended again at once.
     */
    @Test
    void aRecoveryThatFailsStillReportsTheStepDownAndReleases() throws Exception {
        Recorder recorder = new Recorder();
        AtomicBoolean inTimer = new AtomicBoolean();
        AtomicBoolean inEnd = new AtomicBoolean();
        LongSupplier clock =
                () -> {
                    if (Stacks.onStack(Leadership.class, "onHoldTimer")
                            && inTimer.compareAndSet(true, false)) {
                        inEnd.set(true);
                        throw new IllegalStateException("test: the clock throws in a renewal");
                    }
                    if (Stacks.onStack(Term.class, "end") && inEnd.compareAndSet(true, false)) {
                        throw new IllegalStateException("test: the clock throws as the term ends");
                    }
                    return System.nanoTime();
                };
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostRunning = new AtomicInteger();
        Elector a =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(6))
                                .renewInterval(Duration.ofMillis(500))
                                .acquireInterval(Duration.ofMillis(500))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .clock(clock)
                                .observer(recorder)
                                .build());
        electors.add(a);
        a.start(
                term -> {
                    mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                    try {
                        term.awaitEnd();
                    } finally {
                        running.decrementAndGet();
                    }
                });
        Recorder.Event first = recorder.await("elected", 1);
        inTimer.set(true);
        Recorder.Event second = recorder.await("elected", 2);
        assertThat(second.token()).isGreaterThan(first.token());
        assertThat(recorder.kinds()).containsSubsequence("elected", "steppedDown", "elected");
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.INTERNAL_ERROR);
        assertThat(recorder.errors(Operation.INTERNAL)).hasSize(1);
        assertThat(mostRunning.get()).isEqualTo(1);
    }
}
