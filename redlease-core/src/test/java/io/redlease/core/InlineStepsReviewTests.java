package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Review of the steps a run handles at once on the thread that brings their event ({@link
 * Campaign#executeNow}): a client's I/O thread, a stopping caller. Such a step must behave as if it
 * ran on the loop thread: a timer it cancels does not run after it, and the caller's code that its
 * outcome completes does not run on the client's I/O thread.
 */
@ExtendWith(RedisExtension.class)
class InlineStepsReviewTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private StringRedisTemplate redis;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        if (server.isPaused()) {
            server.resume();
        }
        electors.forEach(Elector::close);
        templates.close();
    }

    @Test
    void aLateWinTakenInlineIsNotFollowedByTheRetryItCancelled() throws Exception {
        // A follower's acquire misses its bound (Redis stalls) and wins once Redis answers; the
        // win is taken as the term on the client's I/O thread (settled, inline), which cancels the
        // retry timer. Here the timer fires while that step runs, so its task already waits for
        // the run's lock when it is cancelled: it must not run once the step is done (it would
        // send an acquire while leading, which takes the run's own lease over with a new token
        // and starts a second term over the first).
        redis.opsForValue().set(name + ":leader", "other", Duration.ofSeconds(30));
        ElectorRuntime runtime = new ElectorRuntime(1);
        HoldingClock clock = new HoldingClock();
        Recorder recorder = new Recorder();
        AtomicInteger renewals = new AtomicInteger();
        Observer renewed =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        if (operation == Operation.RENEW && succeeded) {
                            renewals.incrementAndGet();
                        }
                    }
                };
        Elector follower =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(4))
                                .renewInterval(Duration.ofMillis(500))
                                .acquireInterval(Duration.ofMillis(300))
                                .instanceId("b")
                                .releaseNotifications(false)
                                .clock(clock)
                                .observer(recorder)
                                .observer(renewed)
                                .build(),
                        runtime);
        electors.add(follower);
        follower.start();
        assertThat(follower.firstOutcome().get(10, TimeUnit.SECONDS)).isFalse();
        clock.loop = follower.loop().submit(Thread::currentThread).get(10, TimeUnit.SECONDS);

        // The lease is free, but Redis stalls: the next acquire misses its bound.
        redis.delete(name + ":leader");
        server.pause();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !recorder.errors(Operation.ACQUIRE).isEmpty());
        clock.armed.set(true);
        server.resume();

        Recorder.Event elected = recorder.await("elected", 1);
        // Only an acquire sent on hearing a release has its reply handled on the client's thread;
        // this one was sent by the follower's own look, so its late win is taken on the loop,
        // where the cancelled retry cannot run after it either way. (On the inline path the
        // retry's task may already wait for the run's lock: the run's timers (Steps) skip
        // themselves
        // once cancelled.)
        assertThat(clock.engaged).as("the late win was taken on the client's thread").isFalse();
        // Two renewals after the term began: an acquire the retry sent would have been answered.
        int before = renewals.get();
        await().atMost(Duration.ofSeconds(10)).until(() -> renewals.get() >= before + 2);
        assertThat(recorder.electedTokens()).containsExactly(elected.token());
        assertThat(redis.opsForValue().get(name + ":fence"))
                .isEqualTo(Long.toString(elected.token()));
        assertThat(follower.token()).hasValue(elected.token());
    }

    @Test
    void firstOutcomeDependentsDoNotRunOnTheClientsIoThread() throws Exception {
        // The acquire's reply is handled on the client's I/O thread when the loop is idle, and
        // it completes the first outcome. A dependent that reads Redis synchronously through the
        // same client (as an application's startup code may) must not run on that thread: its
        // reply would have to come through the thread it blocks.
        String key = name + ":status";
        redis.opsForValue().set(key, "ready");
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(6))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .build());
        electors.add(elector);
        // Redis holds the first acquire's reply back until the dependent is in place.
        server.pause();
        elector.start();
        CompletableFuture<String> read = new CompletableFuture<>();
        CompletableFuture<Boolean> first = elector.firstOutcome();
        first.thenAccept(
                won -> {
                    try {
                        read.complete(
                                Thread.currentThread().getName()
                                        + " read "
                                        + redis.opsForValue().get(key));
                    } catch (RuntimeException ex) {
                        read.completeExceptionally(ex);
                    }
                });
        assertThat(first).isNotDone();
        server.resume();
        assertThat(read.get(5, TimeUnit.SECONDS)).endsWith(" read ready");
        assertThat(elector.isLeader()).isTrue();
    }

    @Test
    void aStopFromTheEndOfATermEndedInlineDoesNotWait() throws Exception {
        // The leader task returns; the run ends its term on the task's thread (the loop is
        // idle), and the term's end runs its dependents there. One stops the elector: as on the
        // loop thread, the stop must not wait, since the step it waits for cannot run until the
        // step that runs the dependent is done (and the shared loop thread would wait for it too).
        CountDownLatch renewed = new CountDownLatch(1);
        Observer renewals =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        if (operation == Operation.RENEW && succeeded) {
                            renewed.countDown();
                        }
                    }
                };
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(6))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .observer(renewals)
                                .build());
        electors.add(elector);
        CompletableFuture<String> stopped = new CompletableFuture<>();
        elector.start(
                term -> {
                    term.whenEnded()
                            .thenRun(
                                    () -> {
                                        long begin = System.nanoTime();
                                        elector.stop();
                                        stopped.complete(
                                                Thread.currentThread().getName()
                                                        + " waited "
                                                        + TimeUnit.NANOSECONDS.toMillis(
                                                                System.nanoTime() - begin)
                                                        + " ms");
                                    });
                    // Returns once the loop is idle: the first renewal was answered, and the
                    // steps its reply queued have run (the loop thread ran a task queued after).
                    renewed.await();
                    elector.loop().submit(() -> {}).get(5, TimeUnit.SECONDS);
                });
        String outcome = stopped.get(5, TimeUnit.SECONDS);
        assertThat(outcome).startsWith("redlease-leader-");
        await().atMost(Duration.ofSeconds(5)).until(() -> !elector.isRunning());
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void aHandOffOnTheReactiveRunnerNeedsNoLoopThread() throws Exception {
        // Lettuce without a shared connection runs the scripts through the reactive template: the
        // stop's release, the follower's wake-up, its acquire and that acquire's reply are handled
        // inline, while both runs' loop threads are held.
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.setShareNativeConnection(false);
        factory.afterPropertiesSet();
        factory.start();
        StringRedisTemplate reactive = new StringRedisTemplate(factory);
        reactive.afterPropertiesSet();
        try {
            Recorder leader = new Recorder();
            Recorder follower = new Recorder();
            CountDownLatch renewed = new CountDownLatch(1);
            Observer renewals =
                    new Observer() {
                        @Override
                        public void onRoundTrip(
                                Operation operation, Duration duration, boolean succeeded) {
                            if (operation == Operation.RENEW && succeeded) {
                                renewed.countDown();
                            }
                        }
                    };
            Elector a =
                    new Elector(
                            reactive,
                            ElectorConfig.builder(name)
                                    // A long lease: its renewals, every 10 s, stay out of the few
                                    // seconds held below (a
                                    // renewal's reply queued for the loop thread would send the
                                    // stop there too).
                                    .ttl(Duration.ofSeconds(30))
                                    .acquireInterval(Duration.ofSeconds(4))
                                    .instanceId("a")
                                    .observer(leader)
                                    .observer(renewals)
                                    .build());
            electors.add(a);
            a.start();
            leader.await("elected", 1);
            Elector b =
                    new Elector(
                            reactive,
                            ElectorConfig.builder(name)
                                    .ttl(Duration.ofSeconds(6))
                                    .acquireInterval(Duration.ofSeconds(4))
                                    .instanceId("b")
                                    .observer(follower)
                                    .build());
            electors.add(b);
            b.start();
            assertThat(renewed.await(10, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(b::idleFollower);
            // The steps the last replies handed to the loops have run too (a renewal's reply and
            // its
            // report are separate steps, and either may still wait when the observer hears of it).
            await().atMost(Duration.ofSeconds(10)).until(() -> a.stepsIdle() && b.stepsIdle());
            try (HeldLoops loops = HeldLoops.of(a, b)) {
                CompletableFuture<Void> stopped = a.stopAsync();
                Recorder.Event elected = follower.await("elected", 1);
                assertThat(loops.holding()).isTrue();
                assertThat(elected.token()).isGreaterThan(leader.electedTokens().get(0));
                loops.close();
                // The release's reply is handled on the loop thread, once it is free.
                leader.await("steppedDown", 1);
                stopped.get(10, TimeUnit.SECONDS);
            }
        } finally {
            electors.forEach(Elector::close);
            electors.clear();
            factory.destroy();
        }
    }

    /**
     * A clock that, once armed, holds the first call made on a client's I/O thread until the run's
     * loop thread waits for the run's lock (a step of its own has begun meanwhile).
     */
    private static final class HoldingClock implements LongSupplier {

        final AtomicBoolean armed = new AtomicBoolean();

        volatile Thread loop;

        volatile boolean engaged;

        @Override
        public long getAsLong() {
            if (Thread.currentThread().getName().startsWith("lettuce-")
                    && armed.compareAndSet(true, false)) {
                engaged = true;
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(1))
                        .until(() -> waitsForRunLock(loop));
            }
            return System.nanoTime();
        }

        private static boolean waitsForRunLock(Thread thread) {
            return thread.getState() == Thread.State.WAITING
                    && LockSupport.getBlocker(thread) instanceof AbstractQueuedSynchronizer
                    && Arrays.stream(thread.getStackTrace())
                            .anyMatch(
                                    frame ->
                                            frame.getClassName().startsWith(Steps.class.getName()));
        }
    }
}
