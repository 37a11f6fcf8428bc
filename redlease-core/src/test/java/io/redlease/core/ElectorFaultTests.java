package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.BlackholeServer;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The run loop when Redis hangs, dies, pauses or loses keys: every round trip stays bounded and a
 * leader steps down at its own deadline (Go: TestHold_*, *_BoundedAgainstUnresponsiveServer).
 */
@ExtendWith(RedisExtension.class)
class ElectorFaultTests {

    private final Templates templates = new Templates();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    private String name;

    @BeforeEach
    void setUp(TestInfo info) {
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        templates.close();
    }

    private Elector elector(
            StringRedisTemplate redis,
            String id,
            Duration ttl,
            Duration interval,
            Observer observer) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(ttl)
                                .renewInterval(interval)
                                .acquireInterval(interval)
                                .instanceId(id)
                                .observer(observer)
                                .build());
        closeables.add(elector);
        return elector;
    }

    /** A leader task that records when its term ended and the term's final deadline. */
    private static final class EndClock implements LeaderTask {

        final AtomicLong endedAt = new AtomicLong();

        final AtomicLong deadline = new AtomicLong();

        volatile Term term;

        @Override
        public void lead(Term term) {
            this.term = term;
            try {
                term.awaitEnd();
            } catch (InterruptedException ex) {
                // The end of the term arrives as an interrupt.
            }
            endedAt.set(term.endedAtNanos());
            deadline.set(term.deadlineNanos());
        }

        void awaitRenewals(long n) {
            org.awaitility.Awaitility.await().until(() -> term != null && term.renewals() >= n);
        }

        void awaitEnd() {
            org.awaitility.Awaitility.await().until(() -> endedAt.get() != 0);
        }

        /** How long after the local deadline the loop ended the term; never negative. */
        Duration lateness() {
            return Duration.ofNanos(endedAt.get() - deadline.get());
        }
    }

    @Test
    void theWatchdogEndsATermAtItsDeadlineWhileItsLoopIsHeldUp(RedisServer server)
            throws Exception {
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        templates.on(server),
                        "a",
                        Duration.ofSeconds(1),
                        Duration.ofMillis(100),
                        recorder);
        elector.start();
        recorder.await("elected", 1);
        Term term = elector.term().orElseThrow();
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        // Hold up the election's own loop, as a defect in the engine would.
        elector.loop()
                .execute(
                        () -> {
                            held.countDown();
                            try {
                                release.await(10, TimeUnit.SECONDS);
                            } catch (InterruptedException ex) {
                                Thread.currentThread().interrupt();
                            }
                        });
        assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
        try {
            // Past its deadline the term is no longer active at once; the watchdog ends it.
            await().atMost(Duration.ofSeconds(3)).until(() -> term.endReason().isPresent());
            assertThat(term.isActive()).isFalse();
            assertThat(term.endReason()).contains(StepDownReason.EXPIRED);
            assertThat(elector.isLeader()).isFalse();
            assertThat(Duration.ofNanos(term.endedAtNanos() - term.deadlineNanos()))
                    .as("ended at its deadline")
                    .isLessThan(Duration.ofMillis(500));
        } finally {
            release.countDown();
        }
        // Once its loop runs again the elector releases, reports and contends again.
        assertThat(recorder.await("steppedDown", 1).detail()).isEqualTo(StepDownReason.EXPIRED);
        recorder.await("elected", 2);
    }

    @Test
    void anUnexpectedErrorInTheEngineEndsTheTermAndTheElectorContendsAgain(RedisServer server) {
        AtomicBoolean breakClock = new AtomicBoolean();
        LongSupplier clock =
                () -> {
                    if (breakClock.compareAndSet(true, false)) {
                        throw new IllegalStateException("the clock broke");
                    }
                    return System.nanoTime();
                };
        Recorder recorder = new Recorder();
        Elector elector =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(50))
                                .acquireInterval(Duration.ofMillis(50))
                                .instanceId("a")
                                .clock(clock)
                                .observer(recorder)
                                .build());
        closeables.add(elector);
        elector.start();
        recorder.await("elected", 1);
        breakClock.set(true);
        Recorder.Event down = recorder.await("steppedDown", 1);
        assertThat(down.detail()).isEqualTo(StepDownReason.INTERNAL_ERROR);
        assertThat(recorder.errors(Operation.INTERNAL))
                .singleElement()
                .satisfies(
                        event ->
                                assertThat(((Recorder.ErrorDetail) event.detail()).error())
                                        .hasMessage("the clock broke"));
        // It contends again, and the term it wins renews as usual.
        recorder.await("elected", 2);
        Term term = elector.term().orElseThrow();
        long renewals = term.renewals();
        await().until(() -> term.renewals() > renewals);
    }

    @Test
    void connectingIsBoundedAgainstAnUnresponsiveServer() {
        BlackholeServer blackhole = BlackholeServer.start();
        closeables.add(blackhole);
        StringRedisTemplate hung =
                templates.withoutClientTimeouts(blackhole.host(), blackhole.port());
        Recorder recorder = new Recorder();
        Elector elector =
                new Elector(
                        hung,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(100))
                                .connectTimeout(Duration.ofMillis(500))
                                .instanceId("a")
                                .observer(recorder)
                                .build());
        closeables.add(elector);
        long start = System.nanoTime();
        elector.start();
        // The server accepts the connection and never answers its handshake.
        Recorder.Event error = recorder.await("error", 1);
        assertThat(Duration.ofNanos(error.nanos() - start)).isLessThan(Duration.ofSeconds(2));
        Recorder.ErrorDetail detail = (Recorder.ErrorDetail) error.detail();
        assertThat(detail.operation()).isEqualTo(Operation.ACQUIRE);
        assertThat(detail.error())
                .isInstanceOf(QueryTimeoutException.class)
                .hasMessageContaining("connecting to Redis")
                .hasMessageContaining("500ms");
        long stopping = System.nanoTime();
        elector.stop();
        assertThat(Duration.ofNanos(System.nanoTime() - stopping))
                .isLessThan(Duration.ofSeconds(2));
        assertThat(recorder.count("elected")).isZero();
    }

    @Test
    void hungRenewalsAreBoundedAndTheLeaderStepsDownAtItsDeadline(RedisServer server) {
        TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        closeables.add(proxy);
        StringRedisTemplate redis = templates.withoutClientTimeouts(proxy.host(), proxy.port());
        Recorder recorder = new Recorder();
        // TTL 600 ms and renewals every 280 ms: after the last success the ticks fall 280 and
        // 560 ms later and the next one at 840 ms, well after the 600 ms deadline.
        Elector elector =
                elector(redis, "a", Duration.ofMillis(600), Duration.ofMillis(280), recorder);
        EndClock task = new EndClock();
        elector.start(task);
        task.awaitRenewals(1);
        proxy.blackhole();
        task.awaitEnd();
        assertThat(task.lateness()).isLessThan(Duration.ofMillis(200));
        Recorder.Event down = recorder.await("steppedDown", 1);
        assertThat(down.detail()).isEqualTo(StepDownReason.EXPIRED);
        assertThat(recorder.errors(Operation.RENEW))
                .isNotEmpty()
                .allSatisfy(
                        event ->
                                assertThat(((Recorder.ErrorDetail) event.detail()).error())
                                        .isInstanceOf(QueryTimeoutException.class));
        // The release is bounded too (one renew interval) and reported before the step-down.
        assertThat(recorder.errors(Operation.RELEASE)).hasSize(1);
        assertThat(recorder.kinds().indexOf("steppedDown"))
                .isGreaterThan(
                        recorder.events().indexOf(recorder.errors(Operation.RELEASE).get(0)));
        proxy.pass();
    }

    @Test
    void anAbandonedAcquireIsNotOverlappedByANewOne(RedisServer server) {
        TcpProxy proxy = TcpProxy.start(server.host(), server.port());
        closeables.add(proxy);
        StringRedisTemplate redis = templates.withoutClientTimeouts(proxy.host(), proxy.port());
        // Connect first, then hold every byte: the first acquire is abandoned at its bound.
        redis.hasKey("warm-up");
        proxy.blackhole();
        Recorder recorder = new Recorder();
        Elector elector =
                elector(redis, "a", Duration.ofSeconds(1), Duration.ofMillis(50), recorder);
        elector.start();
        recorder.await("error", 4);
        List<Recorder.Event> errors = recorder.errors(Operation.ACQUIRE);
        assertThat(((Recorder.ErrorDetail) errors.get(0).detail()).error())
                .hasMessageContaining("got no reply within");
        assertThat(errors.subList(1, 4))
                .allSatisfy(
                        event ->
                                assertThat(((Recorder.ErrorDetail) event.detail()).error())
                                        .hasMessageContaining("previous acquire")
                                        .hasMessageContaining("still has no reply"));
        proxy.pass();
        long token = recorder.await("elected", 1).token();
        // The abandoned acquire won first (token 1, our id), but its reply came more than TTL -
        // renew interval after its send, too late to be a term: the next attempt took the lease
        // over with a new token.
        assertThat(token).isEqualTo(2);
        assertThat(elector.fencer().orElseThrow().set(name + ":state", "current")).isTrue();
        assertThat(recorder.count("steppedDown")).isZero();
    }

    @Test
    void aTokenAtOrAbove2To53IsNeverStarted(RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        redis.opsForValue().set(name + ":fence", Long.toString((1L << 53) - 1));
        Recorder recorder = new Recorder();
        Elector elector =
                elector(redis, "a", Duration.ofSeconds(1), Duration.ofMillis(50), recorder);
        elector.start();
        Recorder.Event error = recorder.await("error", 1);
        assertThat(((Recorder.ErrorDetail) error.detail()).error())
                .hasMessageContaining("at or above 2^53");
        assertThat(recorder.count("elected")).isZero();
        org.awaitility.Awaitility.await()
                .until(() -> !Boolean.TRUE.equals(redis.hasKey(name + ":leader")));
    }

    @Test
    void leaderStepsDownWithinTheTtlWhenRedisDies(@Dedicated RedisServer server) {
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        templates.on(server),
                        "a",
                        Duration.ofMillis(200),
                        Duration.ofMillis(50),
                        recorder);
        EndClock task = new EndClock();
        elector.start(task);
        task.awaitRenewals(1);
        server.kill();
        task.awaitEnd();
        assertThat(task.lateness()).isLessThan(Duration.ofMillis(500));
        assertThat(recorder.await("steppedDown", 1).detail()).isEqualTo(StepDownReason.EXPIRED);
        assertThat(recorder.errors(Operation.RENEW)).isNotEmpty();
    }

    @Test
    void leaderStepsDownWhenRedisIsPausedAndLeadsAgainAfterResume(@Dedicated RedisServer server) {
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        templates.on(server),
                        "a",
                        Duration.ofMillis(500),
                        Duration.ofMillis(100),
                        recorder);
        EndClock task = new EndClock();
        elector.start(task);
        long first = recorder.await("elected", 1).token();
        task.awaitRenewals(1);
        server.pause();
        try {
            task.awaitEnd();
            assertThat(task.lateness()).isLessThan(Duration.ofMillis(500));
        } finally {
            server.resume();
        }
        long second = recorder.await("elected", 2, Duration.ofSeconds(10)).token();
        assertThat(second).isGreaterThan(first);
    }

    @Test
    void tokensKeepIncreasingAcrossARedisCrashWithAppendFsyncAlways(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server) {
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        templates.on(server),
                        "a",
                        Duration.ofMillis(500),
                        Duration.ofMillis(100),
                        recorder);
        elector.start();
        long before = recorder.await("elected", 1).token();
        elector.resign();
        long last = recorder.await("elected", 2).token();
        assertThat(last).isGreaterThan(before);
        server.kill();
        server.restart();
        // The lease survived too, so the leader may simply keep renewing; a new term must
        // still get a token above every token minted before the crash.
        elector.resign();
        long after = recorder.await("elected", 3, Duration.ofSeconds(10)).token();
        assertThat(after).isGreaterThan(last);
    }

    @Test
    void leaseExpiredEarlyEndsTheTermAndANewOneFollows(RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        Recorder recorder = new Recorder();
        Elector elector =
                elector(redis, "a", Duration.ofSeconds(1), Duration.ofMillis(50), recorder);
        elector.start();
        long first = recorder.await("elected", 1).token();
        redis.delete(name + ":leader");
        assertThat(recorder.await("steppedDown", 1).detail()).isEqualTo(StepDownReason.LOST);
        assertThat(recorder.await("elected", 2).token()).isGreaterThan(first);
    }

    @Test
    void scriptFlushDuringATermIsInvisible(RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        Recorder recorder = new Recorder();
        Elector elector =
                elector(redis, "a", Duration.ofSeconds(2), Duration.ofMillis(20), recorder);
        elector.start();
        recorder.await("elected", 1);
        for (int i = 0; i < 10; i++) {
            long renewals = elector.term().orElseThrow().renewals();
            server.scriptFlush();
            org.awaitility.Awaitility.await()
                    .until(() -> elector.term().orElseThrow().renewals() > renewals + 1);
        }
        // A renewal may miss its 20 ms bound on a loaded machine; none may fail otherwise (a
        // NOSCRIPT reaching the caller would).
        assertThat(recorder.errors(Operation.RENEW))
                .allSatisfy(
                        event ->
                                assertThat(((Recorder.ErrorDetail) event.detail()).error())
                                        .isInstanceOf(QueryTimeoutException.class));
        assertThat(recorder.count("steppedDown")).isZero();
        assertThat(redis.getExpire(name + ":leader", TimeUnit.MILLISECONDS)).isPositive();
    }
}
