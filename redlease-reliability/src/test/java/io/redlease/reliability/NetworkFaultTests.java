package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.reliability.Checker.Kind;
import io.redlease.reliability.History.Outcome;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.RedisCallback;

/**
 * Faults between one candidate and Redis, each candidate behind its own TCP proxy: a writer parked
 * between deciding and writing, a partition, a delayed write, a lost acquire reply.
 */
@ExtendWith(RedisExtension.class)
class NetworkFaultTests {

    private static final Duration STEADY = Duration.ofMillis(2);

    @Test
    void writerParkedBetweenDecidingAndWritingIsFencedOut(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            parkTheLeadersWriter(harness, true);
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void mutantParkedWriterWithoutTheFenceIsCaught(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            parkTheLeadersWriter(harness, false);
            // The parked write lands after the successor's: every write-order rule.
            harness.assertCaught(
                    harness.check(),
                    "mutant: unfenced write by a parked writer",
                    harness.faultStart("writer parked"),
                    Kind.LOG_ORDER,
                    Kind.NEWER_TERM,
                    Kind.STALE_WRITE,
                    Kind.REAL_TIME_ORDER);
        }
    }

    /**
     * A's writer decides to write its 4th entry and is parked there; A's term ends (resign) while
     * it is parked, its lease lapses, B is elected and writes; then A's writer goes ahead.
     */
    static void parkTheLeadersWriter(Harness harness, boolean fenced) {
        CountDownLatch parked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Workload.Gate gate =
                (candidate, token, seq) -> {
                    if (seq != 4) {
                        return false;
                    }
                    parked.countDown();
                    awaitUninterruptibly(release);
                    return true;
                };
        Workload workload = Workload.steady(STEADY).gate(gate);
        Candidate a = harness.candidate("a", fenced ? workload : workload.unfenced());
        Harness.awaitLeading(a, Duration.ofSeconds(5));
        Candidate b = harness.candidate("b", Workload.steady(STEADY));
        awaitUninterruptibly(parked);
        long start = System.nanoTime();
        a.elector.resign();
        Harness.awaitLeading(b, Duration.ofSeconds(5));
        harness.awaitApplied("b", 3);
        long healed = System.nanoTime();
        release.countDown();
        harness.fault("writer parked between deciding and writing", start, healed);
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(5)))
                .until(() -> harness.history.writes("a").stream().anyMatch(w -> w.seq() == 4));
        History.Write late =
                harness.history.writes("a").stream()
                        .filter(w -> w.seq() == 4)
                        .findFirst()
                        .orElseThrow();
        assertThat(late.outcome()).isEqualTo(fenced ? Outcome.REJECTED : Outcome.APPLIED);
    }

    @Test
    void partitionedLeaderStepsDownByItsOwnDeadlineAndItsHeldWritesAreFencedOut(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            Candidate a = harness.candidate("a", Workload.steady(STEADY));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            Candidate b = harness.candidate("b", Workload.steady(STEADY));
            harness.awaitApplied("a", 3);
            long cut = System.nanoTime();
            a.proxy.blackhole();
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(2)))
                    .until(() -> !harness.history.termEnds("a").isEmpty());
            long stepDown = harness.history.termEnds("a").get(0).at() - cut;
            Figures.duration("step-down: leader partitioned (blackhole), after the cut", stepDown);
            Figures.duration(
                    "failover: leader partitioned -> successor elected",
                    b.lastElection().at() - cut);
            // It stops acting no later than the TTL after its last successful renewal, which was
            // sent before the cut.
            assertThat(Duration.ofNanos(stepDown)).isLessThan(harness.ttl.plus(Harness.SLACK));
            harness.awaitApplied("b", 3);
            long healed = System.nanoTime();
            a.proxy.pass();
            harness.fault("leader partitioned (blackhole)", cut, healed);
            harness.assertLeaderBackAfterHeal("leader partitioned", healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void fencedWriteDelayedPastTheSuccessorsWritesIsUnknownToTheCallerAndRefused(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            // The writer decides on its 5th write and waits there until the link is slow, so
            // that this write is surely sent over the slow link (one already on its way when
            // the delay starts would reach Redis at once).
            CountDownLatch parked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Workload.Gate gate =
                    (candidate, token, seq) -> {
                        if (seq != 5) {
                            return false;
                        }
                        parked.countDown();
                        awaitUninterruptibly(release);
                        return true;
                    };
            // Detached: the end of the term does not interrupt the write in flight; the fenced
            // call's own bound (the term's deadline) ends the wait.
            Candidate a =
                    harness.candidate("a", Workload.steady(STEADY).gate(gate).detachedWrites());
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            awaitUninterruptibly(parked);
            Candidate b = harness.candidate("b", Workload.steady(STEADY));
            // Each way: the write sent now reaches Redis 2 s later, after A's lease lapsed (its
            // renewals are slowed alike) and B was elected.
            a.proxy.delay(Duration.ofMillis(2000));
            long start = System.nanoTime();
            release.countDown();
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            long bElected = b.lastElection().at();
            harness.awaitApplied("b", 3);
            harness.await(
                    "the delayed write's verdict",
                    Duration.ofSeconds(10),
                    () -> harness.history.writes("a").stream().anyMatch(w -> w.seq() == 5));
            long healed = System.nanoTime();
            a.proxy.pass();
            harness.fault("fenced write delayed (proxy delay 2 s each way)", start, healed);
            History.Write delayed =
                    harness.history.writes("a").stream()
                            .filter(w -> w.seq() == 5)
                            .findFirst()
                            .orElseThrow();
            assertThat(delayed.start() - start).isPositive();
            assertThat(delayed.start() - bElected).isNegative();
            // No reply came within A's term: the caller is told the outcome is unknown at the
            // deadline, before the 4 s round trip could answer.
            assertThat(delayed.outcome())
                    .as(() -> "the delayed write; " + harness.history.summary())
                    .isEqualTo(Outcome.ERROR);
            assertThat(delayed.error()).contains("FenceOutcomeUnknownException");
            assertThat(Duration.ofNanos(delayed.end() - delayed.start()))
                    .isLessThan(Duration.ofMillis(4000));
            // The write itself still reaches Redis: once the proxy holds nothing, a PING on A's
            // connection is answered after it, so by then the fence has had its say, and the log
            // must not hold it.
            harness.await(
                    "the delayed chunks delivered",
                    Duration.ofSeconds(10),
                    () -> a.proxy.heldChunks() == 0);
            assertThat(a.redis.execute((RedisCallback<String>) c -> c.ping())).isEqualTo("PONG");
            assertThat(harness.log.read(harness.control()))
                    .noneMatch(e -> e.candidate().equals("a") && e.seq() == 5);
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void lostAcquireReplyLeavesOurLeaseAndAMintedTokenAndTheNextAttemptWinsAFresherOne(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            // Load the scripts, so the acquire is one round trip (no NOSCRIPT, then EVAL).
            Candidate warm = harness.candidate("warm", Workload.steady(STEADY).writesPerTerm(1));
            Harness.awaitLeading(warm, Duration.ofSeconds(5));
            warm.close();
            Candidate a =
                    harness.unstarted(
                            "a",
                            Workload.steady(STEADY),
                            config -> config.releaseNotifications(false));
            a.redis.hasKey("connect"); // opens the connection through the proxy
            String counterBefore = harness.control().opsForValue().get(harness.log.counterKey());
            long start = System.nanoTime();
            a.proxy.dropNextReply();
            a.start();
            // The acquire runs at Redis (a token is minted) although its reply never arrives.
            harness.await(
                    "the acquire minted a token",
                    Duration.ofSeconds(5),
                    () ->
                            !counterBefore.equals(
                                    harness.control().opsForValue().get(harness.log.counterKey())));
            // Read at once: the lease lives for the TTL from the acquire, and the elector waits
            // that long for the first reply of a run.
            assertThat(harness.control().opsForValue().get(harness.name + ":leader"))
                    .isEqualTo("a");
            long minted =
                    Long.parseLong(harness.control().opsForValue().get(harness.log.counterKey()));
            assertThat(minted).isGreaterThan(Long.parseLong(counterBefore));
            harness.await(
                    "a reports the acquire that got no reply",
                    Duration.ofSeconds(5),
                    () ->
                            harness.history.failures().stream()
                                    .anyMatch(f -> f.candidate().equals("a")));
            assertThat(harness.history.failures())
                    .filteredOn(f -> f.candidate().equals("a"))
                    .first()
                    .satisfies(
                            f ->
                                    assertThat(f.error())
                                            .contains(QueryTimeoutException.class.getName()));
            assertThat(harness.history.elections("a")).isEmpty();
            // A lost reply means a broken connection: the client reconnects.
            a.proxy.cut();
            long healed = System.nanoTime();
            harness.fault("acquire reply lost", start, healed);
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            assertThat(a.lastElection().token()).isGreaterThan(minted);
            harness.awaitApplied("a", 3);
            Harness.assertSafe(harness.check());
        }
    }

    static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (!latch.await(30, TimeUnit.SECONDS)) {
                        throw new AssertionError("latch not released within 30 s");
                    }
                    return;
                } catch (InterruptedException ex) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
