package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Calls bound to a term: nesting keeps the term's interrupt, and stopping is bounded. */
@ExtendWith(RedisExtension.class)
class TermTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final CountDownLatch finish = new CountDownLatch(1);

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        finish.countDown();
        electors.forEach(Elector::stopAsync);
        electors.forEach(Elector::close);
        templates.close();
    }

    private Elector elector(String election, String id, Observer... observers) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(election)
                        .ttl(Duration.ofSeconds(2))
                        .renewInterval(Duration.ofMillis(200))
                        .acquireInterval(Duration.ofMillis(100))
                        .drainTimeout(Duration.ofSeconds(30))
                        .instanceId(id);
        for (Observer observer : observers) {
            builder.observer(observer);
        }
        Elector elector = new Elector(redis, builder.build());
        electors.add(elector);
        return elector;
    }

    private static Term leading(Elector elector) {
        await().until(elector::isLeader);
        return elector.term().orElseThrow();
    }

    /** Sleeps until interrupted, then restores the interrupt, as well-behaved code does. */
    private static void sleepUntilInterrupted(CountDownLatch started) {
        started.countDown();
        try {
            // Work that lasts until the term ends and interrupts it, not a synchronisation.
            Thread.sleep(60_000);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits like a blocking driver call that ignores interrupts. */
    private static void ignoreInterruptsUntil(CountDownLatch latch) {
        while (true) {
            try {
                if (latch.await(10, TimeUnit.MILLISECONDS)) {
                    return;
                }
            } catch (InterruptedException ignored) {
                // Swallowed, as such a call would.
            }
        }
    }

    @Test
    void aNestedCallInTheSameTermKeepsTheInterruptForTheOuterCode() throws Exception {
        Elector elector = elector(name, "a");
        elector.start();
        Term term = leading(elector);
        CountDownLatch inner = new CountDownLatch(1);
        CompletableFuture<Boolean> outerSawInterrupt = new CompletableFuture<>();
        AtomicBoolean leftClean = new AtomicBoolean();
        Thread caller =
                new Thread(
                        () -> {
                            try {
                                term.execute(
                                        () -> {
                                            term.execute(
                                                    () -> {
                                                        sleepUntilInterrupted(inner);
                                                        return null;
                                                    });
                                            outerSawInterrupt.complete(
                                                    Thread.currentThread().isInterrupted());
                                            return null;
                                        });
                            } catch (Exception ex) {
                                outerSawInterrupt.completeExceptionally(ex);
                            }
                            leftClean.set(!Thread.currentThread().isInterrupted());
                        });
        caller.start();
        assertThat(inner.await(10, TimeUnit.SECONDS)).isTrue();
        elector.resign();
        assertThat(outerSawInterrupt.get(10, TimeUnit.SECONDS)).isTrue();
        caller.join(10_000);
        assertThat(leftClean).as("the outermost call clears the term's interrupt").isTrue();
    }

    @Test
    void aLeaderTaskCallingIntoItsOwnTermKeepsTheInterrupt() throws Exception {
        CompletableFuture<Boolean> taskSawInterrupt = new CompletableFuture<>();
        CountDownLatch inner = new CountDownLatch(1);
        Recorder recorder = new Recorder();
        Elector elector = elector(name, "a", recorder);
        elector.start(
                term -> {
                    term.execute(
                            () -> {
                                sleepUntilInterrupted(inner);
                                return null;
                            });
                    taskSawInterrupt.complete(Thread.currentThread().isInterrupted());
                });
        assertThat(inner.await(10, TimeUnit.SECONDS)).isTrue();
        long stopping = System.nanoTime();
        elector.stop();
        assertThat(taskSawInterrupt.get(10, TimeUnit.SECONDS)).isTrue();
        // The task returned at its interrupt: stopping did not wait for the drain timeout.
        assertThat(Duration.ofNanos(System.nanoTime() - stopping))
                .isLessThan(Duration.ofSeconds(10));
        assertThat(recorder.events("steppedDown")).hasSize(1);
    }

    @Test
    void aCallOfAnotherElectionNestedInATermLeavesTheInterruptToTheOutermostCall()
            throws Exception {
        Elector outer = elector(name + ":outer", "a");
        Elector inner = elector(name + ":inner", "a");
        outer.start();
        inner.start();
        Term outerTerm = leading(outer);
        Term innerTerm = leading(inner);
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Boolean> outerSawInterrupt = new CompletableFuture<>();
        AtomicBoolean leftClean = new AtomicBoolean();
        Thread caller =
                new Thread(
                        () -> {
                            try {
                                outerTerm.execute(
                                        () -> {
                                            innerTerm.execute(
                                                    () -> {
                                                        sleepUntilInterrupted(started);
                                                        return null;
                                                    });
                                            outerSawInterrupt.complete(
                                                    Thread.currentThread().isInterrupted());
                                            return null;
                                        });
                            } catch (Exception ex) {
                                outerSawInterrupt.completeExceptionally(ex);
                            }
                            leftClean.set(!Thread.currentThread().isInterrupted());
                        });
        caller.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        inner.resign();
        assertThat(outerSawInterrupt.get(10, TimeUnit.SECONDS)).isTrue();
        caller.join(10_000);
        assertThat(leftClean).isTrue();
        assertThat(outerTerm.isActive()).isTrue();
    }

    @Test
    void stoppingIsBoundedWhenACallIgnoresInterrupts() throws Exception {
        Recorder successor = new Recorder();
        Elector a = elector(name, "a");
        a.start();
        Term term = leading(a);
        Elector b = elector(name, "b", successor);
        b.start();
        successor.await("follower", 1);

        CountDownLatch running = new CountDownLatch(1);
        AtomicReference<Boolean> lateWrite = new AtomicReference<>();
        Thread stubborn =
                new Thread(
                        () -> {
                            try {
                                term.execute(
                                        () -> {
                                            running.countDown();
                                            ignoreInterruptsUntil(finish);
                                            lateWrite.set(
                                                    term.fencer().set(name + ":state", "late"));
                                            return null;
                                        });
                            } catch (Exception ex) {
                                throw new IllegalStateException(ex);
                            }
                        },
                        "stubborn-caller");
        stubborn.start();
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

        long stopping = System.nanoTime();
        assertThat(a.stop(Duration.ofMillis(300))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - stopping))
                .as("drain timeout, release and a short grace")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(a.isRunning()).isFalse();
        assertThat(term.isActive()).isFalse();
        Recorder.Event elected = successor.await("elected", 1);
        assertThat(elected.token()).isGreaterThan(term.token());

        finish.countDown();
        stubborn.join(10_000);
        assertThat(lateWrite.get()).as("the late write of the old term").isFalse();
        assertThat(redis.opsForValue().get(name + ":state")).isNull();
    }

    @Test
    void closeWithAStubbornTaskReleasesTheLeaseAfterTheDrainTimeout() {
        Recorder successor = new Recorder();
        Elector a =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(2))
                                .instanceId("a")
                                .drainTimeout(Duration.ofMillis(300))
                                .build());
        electors.add(a);
        CountDownLatch running = new CountDownLatch(1);
        a.start(
                term -> {
                    running.countDown();
                    ignoreInterruptsUntil(finish);
                });
        await().until(a::isLeader);
        Elector b = elector(name, "b", successor);
        b.start();
        successor.await("follower", 1);
        long stopping = System.nanoTime();
        a.close();
        assertThat(Duration.ofNanos(System.nanoTime() - stopping))
                .isLessThan(Duration.ofSeconds(5));
        successor.await("elected", 1);
    }
}
