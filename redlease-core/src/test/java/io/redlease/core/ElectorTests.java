package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.RespClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The run loop against a healthy Redis (Go: redlease_test Run, Resign, Observer tests). */
@ExtendWith(RedisExtension.class)
class ElectorTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

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
        templates.close();
    }

    private Elector elector(String id, Observer... observers) {
        return elector(id, Duration.ofSeconds(1), Duration.ofMillis(50), observers);
    }

    private Elector elector(String id, Duration ttl, Duration interval, Observer... observers) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(name)
                        .ttl(ttl)
                        .renewInterval(interval)
                        .acquireInterval(interval)
                        .instanceId(id);
        for (Observer observer : observers) {
            builder.observer(observer);
        }
        Elector elector = new Elector(redis, builder.build());
        electors.add(elector);
        return elector;
    }

    private String lease() {
        return redis.opsForValue().get(name + ":leader");
    }

    @Test
    void leaderTaskGetsAFencerThatWrites() {
        AtomicReference<Term> seen = new AtomicReference<>();
        Elector elector = elector("a");
        elector.start(
                term -> {
                    assertThat(term.fencer().hset(name + ":state", "key", "via-callback")).isTrue();
                    seen.set(term);
                    term.awaitEnd();
                });
        await().untilAtomic(seen, org.hamcrest.Matchers.notNullValue());
        assertThat(seen.get().token()).isEqualTo(1);
        assertThat(seen.get().fencer().token()).isEqualTo(1);
        assertThat(redis.opsForHash().get(name + ":state", "key")).isEqualTo("via-callback");
    }

    @Test
    void electsThenReleasesTheLeaseOnStop() {
        Recorder recorder = new Recorder();
        Elector elector = elector("host-a", recorder);
        elector.start(Term::awaitEnd);
        assertThat(recorder.await("elected", 1).token()).isEqualTo(1);
        assertThat(lease()).isEqualTo("host-a");
        elector.stop();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.SHUTDOWN);
        assertThat(elector.isRunning()).isFalse();
    }

    @Test
    void tokenDrivenStyleWithoutATask() {
        Elector elector = elector("a");
        elector.start();
        await().until(elector::isLeader);
        long token = elector.token().orElseThrow();
        assertThat(elector.fencer(token).hset(name + ":state", "k", "v")).isTrue();
        assertThat(elector.fencer().orElseThrow().token()).isEqualTo(token);
        elector.stop();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
        assertThat(elector.isLeader()).isFalse();
        assertThat(elector.token()).isEmpty();
        assertThat(elector.fencer()).isEmpty();
    }

    @Test
    void concurrentRunIsRejectedAndSequentialReuseAllowed() throws Exception {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.start(Term::awaitEnd);
        recorder.await("elected", 1);
        assertThatIllegalStateException()
                .isThrownBy(() -> elector.start(null))
                .withMessage(
                        "redlease: Run called concurrently on the same Elector; use one Elector per"
                                + " Run");
        assertThatIllegalStateException().isThrownBy(() -> elector.run(null));
        elector.stop();

        // A run on an already interrupted thread returns at once without touching Redis.
        redis.delete(List.of(name + ":fence", name + ":fence:applied"));
        Thread.currentThread().interrupt();
        elector.run(null);
        assertThat(Thread.interrupted()).isTrue();
        assertThat(redis.hasKey(name + ":fence")).isFalse();

        // And it can run again.
        elector.start(Term::awaitEnd);
        await().until(elector::isLeader);
    }

    @Test
    void runBlocksUntilInterruptedThenStepsDown() throws Exception {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        AtomicBoolean returned = new AtomicBoolean();
        AtomicBoolean interruptKept = new AtomicBoolean();
        Thread runner =
                new Thread(
                        () -> {
                            elector.run(Term::awaitEnd);
                            interruptKept.set(Thread.currentThread().isInterrupted());
                            returned.set(true);
                        });
        runner.start();
        recorder.await("elected", 1);
        assertThat(returned).isFalse();
        runner.interrupt();
        runner.join(5000);
        assertThat(returned).isTrue();
        assertThat(interruptKept).isTrue();
        assertThat(recorder.kindsIgnoringAcquireErrors()).containsExactly("elected", "steppedDown");
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void taskReturningEndsTheTermAndTheNextTermHasAGreaterToken() {
        List<Long> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.start(term -> tokens.add(term.token()));
        await().until(() -> tokens.size() >= 2);
        assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.TASK_ENDED);
    }

    @Test
    void resignEndsTheTermAndContendsAgain() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.resign(); // not running: no effect
        elector.start(Term::awaitEnd);
        long first = recorder.await("elected", 1).token();
        elector.resign();
        long second = recorder.await("elected", 2).token();
        assertThat(second).isGreaterThan(first);
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.RESIGNED);
        assertThat(recorder.errors(Operation.RENEW)).isEmpty();
    }

    @Test
    void tokenAndIsLeaderTrackLeadership() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        assertThat(elector.token()).isEmpty();
        assertThat(elector.isLeader()).isFalse();
        elector.start();
        await().until(elector::isLeader);
        assertThat(elector.token()).hasValue(1);
        assertThat(elector.term().orElseThrow().isActive()).isTrue();
        elector.stop();
        assertThat(elector.token()).isEmpty();
        assertThat(elector.isLeader()).isFalse();
    }

    @Test
    void followerTakesOverWhenTheLeaderStops() {
        Recorder recorderA = new Recorder();
        Recorder recorderB = new Recorder();
        Elector a = elector("a", recorderA);
        Elector b = elector("b", recorderB);
        a.start(Term::awaitEnd);
        long tokenA = recorderA.await("elected", 1).token();
        b.start(Term::awaitEnd);
        recorderB.await("follower", 1);
        assertThat(b.isLeader()).isFalse();
        a.stop();
        long tokenB = recorderB.await("elected", 1).token();
        assertThat(tokenB).isGreaterThan(tokenA);
        assertThat(lease()).isEqualTo("b");
    }

    @Test
    void onFollowerFiresAgainOnlyAfterLeading() {
        redis.opsForValue().set(name + ":leader", "someone-else", Duration.ofHours(1));
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.start(Term::awaitEnd);
        recorder.await("follower", 1);
        redis.delete(name + ":leader");
        recorder.await("elected", 1);
        redis.opsForValue().set(name + ":leader", "thief", Duration.ofHours(1));
        recorder.await("follower", 2);
        // The role callbacks only: a renewal that misses its bound on a loaded machine reports
        // an error, which changes nothing about the roles.
        assertThat(recorder.kinds())
                .filteredOn(kind -> !kind.equals("error"))
                .containsExactly("follower", "elected", "steppedDown", "follower");
    }

    @Test
    void onElectedFiresEachTermWithAGreaterToken() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.start(Term::awaitEnd);
        recorder.await("elected", 1);
        redis.opsForValue().set(name + ":leader", "thief", Duration.ofHours(1));
        recorder.await("steppedDown", 1);
        redis.delete(name + ":leader");
        recorder.await("elected", 2);
        List<Long> tokens = recorder.electedTokens();
        assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
    }

    @Test
    void stolenLeaseEndsTheTermAndTheThiefKeepsIt() {
        Recorder recorder = new Recorder();
        AtomicBoolean interrupted = new AtomicBoolean();
        CountDownLatch running = new CountDownLatch(1);
        Elector elector = elector("a", recorder);
        elector.start(
                term -> {
                    running.countDown();
                    try {
                        Thread.sleep(Long.MAX_VALUE);
                    } catch (InterruptedException ex) {
                        interrupted.set(true);
                    }
                });
        recorder.await("elected", 1);
        // The theft waits for the task: a term that ends before its task began never starts it.
        await().until(() -> running.getCount() == 0);
        redis.opsForValue().set(name + ":leader", "thief", Duration.ofHours(1));
        assertThat(recorder.await("steppedDown", 1).detail()).isEqualTo(StepDownReason.LOST);
        assertThat(interrupted).isTrue();
        assertThat(lease()).isEqualTo("thief");
        assertThat(elector.isLeader()).isFalse();
    }

    @Test
    void aTermWhoseTokenWasSupersededStepsDownAndANewTermFollows() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.start();
        long first = recorder.await("elected", 1).token();
        // An acquire of this instance that arrives late (it was abandoned at its bound) mints a
        // newer token behind the running term's back; the term must not linger with a token
        // every fenced write now refuses.
        long late = Protocols.acquire(elector).token();
        assertThat(late).isGreaterThan(first);
        assertThat(elector.fencer(first).set(name + ":state", "stale")).isFalse();
        assertThat(recorder.await("steppedDown", 1).detail()).isEqualTo(StepDownReason.LOST);
        long next = recorder.await("elected", 2).token();
        assertThat(next).isGreaterThan(late);
        assertThat(elector.fencer().orElseThrow().set(name + ":state", "fresh")).isTrue();
    }

    @Test
    void steppedDownFiresOnlyAfterLeadershipEnds() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        elector.start(Term::awaitEnd);
        recorder.await("elected", 1);
        await().until(() -> elector.term().map(Term::renewals).orElse(0L) >= 2);
        assertThat(recorder.count("steppedDown")).isZero();
        elector.stop();
        assertThat(recorder.count("steppedDown")).isOne();
    }

    @Test
    void leaseIsRenewedImmediatelyOnElection() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", Duration.ofSeconds(60), Duration.ofSeconds(20), recorder);
        elector.start();
        recorder.await("elected", 1);
        Term term = elector.term().orElseThrow();
        // The next tick is 20 s away: only the renewal sent on election can count here.
        await().atMost(Duration.ofSeconds(10)).until(() -> term.renewals() >= 1);
    }

    @Test
    void deadlineAlreadyPassedStepsDownWithoutRenewing() {
        AtomicLong skew = new AtomicLong();
        Recorder recorder = new Recorder();
        Observer jumpClock =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        // The clock jumps a whole TTL ahead: no renewal may be sent from now
                        // on, and the term ends EXPIRED at once. A renewal sent after the jump
                        // would extend the lease from its send and keep the term going. (One
                        // sent before the jump may still be in flight: the loop renews while
                        // this callback runs on its lane. It extends the lease only from its
                        // own send, which is a TTL behind the jumped clock.)
                        skew.set(Duration.ofSeconds(1).toNanos());
                    }
                };
        ElectorConfig config =
                ElectorConfig.builder(name)
                        .ttl(Duration.ofSeconds(1))
                        .renewInterval(Duration.ofMillis(50))
                        .acquireInterval(Duration.ofMillis(50))
                        .instanceId("a")
                        .observer(jumpClock)
                        .observer(recorder)
                        .clock(() -> System.nanoTime() + skew.get())
                        .build();
        Elector elector = new Elector(redis, config);
        electors.add(elector);
        elector.start();
        Recorder.Event elected = recorder.await("elected", 1);
        Recorder.Event down = recorder.await("steppedDown", 1);
        assertThat(down.detail()).isEqualTo(StepDownReason.EXPIRED);
        assertThat(Duration.ofNanos(down.nanos() - elected.nanos()))
                .isLessThan(Duration.ofMillis(500));
    }

    @Test
    void aTaskThatThrowsEndsItsTermAndIsReported() {
        Recorder recorder = new Recorder();
        Elector elector = elector("a", recorder);
        AtomicLong calls = new AtomicLong();
        elector.start(
                term -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("task bug");
                    }
                    term.awaitEnd();
                });
        recorder.await("elected", 2);
        assertThat(recorder.kindsIgnoringAcquireErrors().subList(0, 4))
                .containsExactly("elected", "error", "steppedDown", "elected");
        Recorder.ErrorDetail error =
                (Recorder.ErrorDetail) recorder.errors(Operation.TASK).get(0).detail();
        assertThat(error.operation()).isEqualTo(Operation.TASK);
        assertThat(error.error()).hasMessage("task bug");
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.TASK_FAILED);
    }

    @Test
    void stopWaitsForTheTaskThenReleases() throws InterruptedException {
        Recorder recorder = new Recorder();
        AtomicBoolean finished = new AtomicBoolean();
        CountDownLatch running = new CountDownLatch(1);
        Elector elector = elector("a", recorder);
        elector.start(
                term -> {
                    running.countDown();
                    try {
                        term.awaitEnd();
                    } catch (InterruptedException ex) {
                        // Wind down: one last write, still under this term's token.
                        term.fencer().set(name + ":state", "final");
                        finished.set(true);
                    }
                });
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        elector.stop();
        assertThat(finished).isTrue();
        assertThat(recorder.kindsIgnoringAcquireErrors())
                .containsExactly("elected", "applied", "steppedDown");
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void callbacksRunOneAtATimeOnOneThreadInTheSeedsOrder() {
        Recorder recorder = new Recorder();
        redis.opsForValue().set(name + ":leader", "other", Duration.ofMillis(300));
        Elector elector = elector("a", recorder);
        elector.start(Term::awaitEnd);
        recorder.await("elected", 1);
        elector.resign();
        recorder.await("elected", 2);
        elector.stop();
        // Acquire errors (a bound that fired under load) may come between; roles keep the order.
        assertThat(recorder.kindsIgnoringAcquireErrors())
                .containsExactly("follower", "elected", "steppedDown", "elected", "steppedDown");
        // On the election's lane, never on the engine's loop threads.
        assertThat(recorder.events())
                .allSatisfy(event -> assertThat(event.thread()).startsWith("redlease-callback-"));
    }

    @Test
    void aThrowingObserverDoesNotBreakTheElection() {
        Observer broken =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        throw new IllegalStateException("observer bug");
                    }
                };
        Recorder recorder = new Recorder();
        Elector elector = elector("a", broken, recorder);
        elector.start();
        recorder.await("elected", 1);
        await().until(() -> elector.term().map(Term::renewals).orElse(0L) >= 3);
        assertThat(elector.isLeader()).isTrue();
    }

    @Test
    void renewalsAtTheirFastestFailOnlyByTheirBound() {
        // A 1 ms interval bounds each round trip at 1 ms: a reply later than that is a genuine
        // timeout, but a reply that arrived is never reported as a failure.
        Recorder recorder = new Recorder();
        Elector elector = elector("a", Duration.ofSeconds(2), Duration.ofMillis(1), recorder);
        elector.start();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> elector.term().map(Term::renewals).orElse(0L) >= 3000);
        assertThat(recorder.events("error"))
                .allSatisfy(
                        event -> {
                            Recorder.ErrorDetail error = (Recorder.ErrorDetail) event.detail();
                            assertThat(error.error())
                                    .isInstanceOf(
                                            org.springframework.dao.QueryTimeoutException.class);
                        });
        assertThat(recorder.count("steppedDown")).isZero();
    }

    @Test
    void manyReleasesAreNeverReportedAsErrors() {
        Recorder recorder = new Recorder();
        ElectorConfig config =
                ElectorConfig.builder(name)
                        .ttl(Duration.ofMillis(1000))
                        .renewInterval(Duration.ofMillis(200))
                        .acquireInterval(Duration.ofMillis(5))
                        .instanceId("a")
                        .observer(recorder)
                        .build();
        Elector elector = new Elector(redis, config);
        electors.add(elector);
        elector.start(Term::awaitEnd);
        int terms = 300;
        for (int i = 1; i <= terms; i++) {
            recorder.await("elected", i);
            elector.resign();
        }
        recorder.await("steppedDown", terms);
        assertThat(recorder.errors(Operation.RELEASE)).isEmpty();
        assertThat(recorder.electedTokens()).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void acquireErrorsBackOffDoublingUpToTheTtl(RedisServer server) throws Exception {
        // A lease key of the wrong type makes every acquire fail fast with WRONGTYPE.
        redis.opsForHash().put(name + ":leader", "f", "v");
        // The attempts are timed by Redis as they arrive (MONITOR), not as the observer hears of
        // their errors: a callback that comes late would shorten the gap after it.
        List<Long> attempts = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder();
        try (RespClient monitor = server.client(Duration.ofSeconds(30))) {
            monitor.send("MONITOR");
            assertThat(monitor.readReply()).isEqualTo("OK");
            Thread reader = new Thread(() -> readAcquires(monitor, attempts), "monitor");
            reader.setDaemon(true);
            reader.start();
            Elector elector = elector("a", Duration.ofMillis(400), Duration.ofMillis(50), recorder);
            elector.start();
            recorder.await("error", 7, Duration.ofSeconds(10));
            await().atMost(Duration.ofSeconds(10)).until(() -> attempts.size() >= 7);
            assertThat(recorder.count("follower")).isZero();
            monitor.close();
            reader.join(TimeUnit.SECONDS.toMillis(10));
        }
        // Delays 50, 100, 200, 400 (capped), 400, 400 ms, each shortened by at most 10 %. The
        // next attempt is timed from the error's reply, so each gap is at least its delay. An
        // attempt whose reply did not come within its bound (a loaded machine) is timed from that
        // bound instead, and Redis may run it later: the gap after it proves nothing.
        List<Throwable> errors =
                recorder.errors(Observer.Operation.ACQUIRE).stream()
                        .map(event -> ((Recorder.ErrorDetail) event.detail()).error())
                        .toList();
        long[] expected = {50, 100, 200, 400, 400, 400};
        int checked = 0;
        for (int i = 0; i < expected.length; i++) {
            if (errors.get(i) instanceof QueryTimeoutException) {
                continue;
            }
            assertThat(errors.get(i)).hasStackTraceContaining("WRONGTYPE");
            long gap = TimeUnit.MICROSECONDS.toMillis(attempts.get(i + 1) - attempts.get(i));
            assertThat(gap)
                    .as("gap before attempt %d, attempts at %s µs", i + 2, attempts)
                    .isGreaterThanOrEqualTo(expected[i] * 9 / 10);
            checked++;
        }
        assertThat(checked).as("gaps after a WRONGTYPE reply, errors %s", errors).isPositive();
        // The cap holds: twice the TTL would be at least 720 ms.
        assertThat(attempts.get(6) - attempts.get(5)).isLessThan(720_000);
    }

    /**
     * Records the time, in µs by Redis's clock, of each acquire of the lease that reaches Redis.
     */
    private void readAcquires(RespClient monitor, List<Long> attempts) {
        String lease = "\"" + name + ":leader\"";
        try {
            while (true) {
                // 1733263200.123456 [0 127.0.0.1:54321] "EVALSHA" "<sha>" "1" "<lease>" ...
                String line = String.valueOf(monitor.readReply());
                if (line.contains(" \"EVALSHA\" ") && line.contains(lease)) {
                    String[] time = line.substring(0, line.indexOf(' ')).split("\\.");
                    attempts.add(Long.parseLong(time[0]) * 1_000_000 + Long.parseLong(time[1]));
                }
            }
        } catch (RuntimeException closed) {
            // The monitor connection was closed.
        }
    }

    @Test
    void aReplyResetsTheBackOff() {
        redis.opsForHash().put(name + ":leader", "f", "v");
        Recorder recorder = new Recorder();
        Elector elector = elector("a", Duration.ofMillis(800), Duration.ofMillis(50), recorder);
        elector.start();
        recorder.await("error", 5, Duration.ofSeconds(10)); // back-off now at 800 ms
        redis.delete(name + ":leader");
        redis.opsForValue().set(name + ":leader", "other", Duration.ofHours(1));
        recorder.await("follower", 1);
        // In one step, so the follower cannot win the lease in between.
        redis.execute(
                org.springframework.data.redis.core.script.RedisScript.of(
                        "redis.call('DEL', KEYS[1]); redis.call('HSET', KEYS[1], 'f', 'v')"),
                List.of(name + ":leader"));
        int before = recorder.errors(Observer.Operation.ACQUIRE).size();
        recorder.await("error", before + 2, Duration.ofSeconds(10));
        List<Recorder.Event> errors = recorder.errors(Observer.Operation.ACQUIRE);
        long gap = errors.get(before + 1).nanos() - errors.get(before).nanos();
        // Reset to 50 ms; without the reset it would be at least 720 ms.
        assertThat(Duration.ofNanos(gap)).isLessThan(Duration.ofMillis(500));
    }

    @Test
    void followerRetriesWhenTheHoldersLeaseLapses() {
        Recorder recorder = new Recorder();
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(5))
                                .acquireInterval(Duration.ofSeconds(4))
                                .instanceId("b")
                                .observer(recorder)
                                .build());
        electors.add(elector);
        // The lease outlives the elector's start and first look (connecting included) even on a
        // cold JVM on a loaded machine; the poll comes much later.
        redis.opsForValue().set(name + ":leader", "crashed", Duration.ofMillis(1000));
        long start = System.nanoTime();
        elector.start();
        recorder.await("follower", 1);
        Recorder.Event elected = recorder.await("elected", 1);
        // Elected when the lease lapsed (1 s), not at the next 4 s poll.
        assertThat(Duration.ofNanos(elected.nanos() - start))
                .isGreaterThanOrEqualTo(Duration.ofMillis(990))
                .isLessThan(Duration.ofMillis(3500));
    }

    @Test
    void withoutLeaseAwareSchedulingFollowersPollAtTheAcquireInterval() {
        Recorder recorder = new Recorder();
        ElectorConfig config =
                ElectorConfig.builder(name)
                        .ttl(Duration.ofSeconds(5))
                        .acquireInterval(Duration.ofMillis(1000))
                        .instanceId("b")
                        .leaseAwareScheduling(false)
                        .observer(recorder)
                        .build();
        Elector elector = new Elector(redis, config);
        electors.add(elector);
        redis.opsForValue().set(name + ":leader", "crashed", Duration.ofMillis(300));
        long start = System.nanoTime();
        elector.start();
        Recorder.Event elected = recorder.await("elected", 1);
        assertThat(Duration.ofNanos(elected.nanos() - start))
                .isGreaterThanOrEqualTo(Duration.ofMillis(900));
    }
}
