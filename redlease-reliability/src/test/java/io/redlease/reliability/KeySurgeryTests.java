package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.reliability.Checker.Kind;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Keys changed behind the elector's back: the lease expired early or deleted, the counter or the
 * mark lost (no regression), both lost (the documented violation, detected), scripts flushed under
 * load.
 */
@ExtendWith(RedisExtension.class)
class KeySurgeryTests {

    private static final Duration STEADY = Duration.ofMillis(2);

    @Test
    void leaseExpiredEarly(RedisServer server, TestInfo info) throws Exception {
        leaseSurgery(
                server,
                info,
                "lease expired early (PEXPIRE 1)",
                (redis, lease) -> redis.expire(lease, Duration.ofMillis(1)));
    }

    @Test
    void leaseDeleted(RedisServer server, TestInfo info) throws Exception {
        leaseSurgery(server, info, "lease deleted (DEL)", (redis, lease) -> redis.delete(lease));
    }

    private interface Surgery {
        void cut(StringRedisTemplate redis, String lease);
    }

    private static void leaseSurgery(
            RedisServer server, TestInfo info, String what, Surgery surgery) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            harness.candidate("a", Workload.steady(STEADY));
            harness.candidate("b", Workload.steady(STEADY));
            Candidate leader = harness.awaitWritingLeader(3);
            int stepDowns = harness.history.stepDowns(leader.id).size();
            long at = System.nanoTime();
            surgery.cut(harness.control(), harness.name + ":leader");
            harness.fault(what, at, at);
            // Whoever wins next (the old leader may win again, with a new token), a leader is
            // back and the old term ends: its renewal finds the lease gone or someone else's.
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(5)))
                    .until(() -> harness.history.stepDowns(leader.id).size() > stepDowns);
            harness.assertLeaderBackAfterHeal(what, at, Duration.ofSeconds(1));
            assertThat(harness.history.elections()).hasSizeGreaterThanOrEqualTo(2);
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void counterLostIsHealedFromTheMarkWithoutRegression(RedisServer server, TestInfo info)
            throws Exception {
        keysLost(server, info, true, false);
    }

    @Test
    void markLostDoesNotRegressTokens(RedisServer server, TestInfo info) throws Exception {
        keysLost(server, info, false, true);
    }

    @Test
    void counterAndMarkBothLostRegressTokensAndTheCheckerDetectsIt(
            RedisServer server, TestInfo info) throws Exception {
        keysLost(server, info, true, true);
    }

    /**
     * Runs a first group of candidates, stops them, deletes keys while no term is active (a running
     * leader's next fenced write would restamp the mark), then runs a second group.
     */
    private static void keysLost(RedisServer server, TestInfo info, boolean counter, boolean mark)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            Candidate a = harness.candidate("a", Workload.steady(STEADY).writesPerTerm(20));
            Candidate b = harness.candidate("b", Workload.steady(STEADY).writesPerTerm(20));
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(10)))
                    .until(() -> harness.history.elections().size() >= 5);
            a.close();
            b.close();
            long at = System.nanoTime();
            if (counter) {
                harness.control().delete(harness.log.counterKey());
            }
            if (mark) {
                harness.control().delete(harness.log.markKey());
            }
            String what =
                    (counter ? "counter" : "")
                            + (counter && mark ? " and " : "")
                            + (mark ? "mark" : "")
                            + " lost (DEL)";
            harness.fault(what, at, at);
            int before = harness.history.elections().size();
            long maxBefore =
                    harness.history.elections().stream()
                            .mapToLong(History.Election::token)
                            .max()
                            .orElseThrow();
            harness.candidate("c", Workload.steady(STEADY).writesPerTerm(20));
            harness.candidate("d", Workload.steady(STEADY).writesPerTerm(20));
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(10)))
                    .until(() -> harness.history.elections().size() >= before + 5);
            long firstAfter = harness.history.elections().get(before).token();
            Checker.Report report = harness.check();
            if (counter && mark) {
                assertThat(firstAfter).isEqualTo(1);
                // Token 1 again: elected twice, written after greater tokens (in the log, in real
                // time, and after their terms were reported).
                harness.assertCaught(
                        report,
                        "counter and mark both lost",
                        at,
                        Kind.DUPLICATE_TOKEN,
                        Kind.LOG_ORDER,
                        Kind.REAL_TIME_ORDER,
                        Kind.STALE_WRITE);
            } else {
                assertThat(firstAfter).isGreaterThan(maxBefore);
                Harness.assertSafe(report);
            }
        }
    }

    @Test
    void markLostWhileATermsWriterIsParkedPastItsDeadlineLosesNothing(
            RedisServer server, TestInfo info) throws Exception {
        // A writer of a term, parked until its successor has come and gone and the mark is lost:
        // its write is past the term's local deadline, so it is refused without being sent, and
        // the fence's missing mark does not matter.
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            CountDownLatch parked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicBoolean first = new AtomicBoolean(true);
            Workload.Gate gate =
                    (candidate, token, seq) -> {
                        if (seq != 3 || !first.compareAndSet(true, false)) {
                            return false;
                        }
                        parked.countDown();
                        NetworkFaultTests.awaitUninterruptibly(release);
                        return true;
                    };
            Candidate a = harness.candidate("a", Workload.steady(STEADY).gate(gate));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            Candidate b = harness.candidate("b", Workload.steady(STEADY).writesPerTerm(3));
            NetworkFaultTests.awaitUninterruptibly(parked);
            a.elector.resign();
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            harness.awaitApplied("b", 3);
            b.close();
            long at = System.nanoTime();
            harness.control().delete(harness.log.markKey());
            release.countDown();
            harness.fault("mark lost while a stale writer is parked", at, at);
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(5)))
                    .until(() -> harness.history.writes("a").stream().anyMatch(w -> w.seq() == 3));
            History.Write stale =
                    harness.history.writes("a").stream()
                            .filter(w -> w.seq() == 3)
                            .findFirst()
                            .orElseThrow();
            assertThat(stale.outcome()).isEqualTo(History.Outcome.REJECTED);
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void markLostLetsAWriteWithAnExplicitTokenThrough(RedisServer server, TestInfo info)
            throws Exception {
        // The boundary behind "mark lost": tokens do not regress, but until the next election or
        // fenced write restamps it, the fence has nothing to compare with. A token handed to
        // another process (the token-driven style) has no term there, only the time to live as
        // its bound, so its holder's write lands.
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            Candidate a = harness.candidate("a", Workload.steady(STEADY).writesPerTerm(2));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            long stale = a.lastElection().token();
            harness.awaitApplied("a", 2);
            Candidate b = harness.candidate("b", Workload.steady(STEADY).writesPerTerm(3));
            a.close();
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            harness.awaitApplied("b", 3);
            b.close();
            long at = System.nanoTime();
            harness.control().delete(harness.log.markKey());
            harness.fault("mark lost while a stale token is held elsewhere", at, at);
            // Another process's elector, which never held that term.
            Candidate other = harness.unstarted("other", Workload.steady(STEADY), x -> {});
            long start = System.nanoTime();
            boolean applied = harness.log.fenced(other.elector.fencer(stale), 1000, "a");
            harness.history.write(
                    new History.Write(
                            "a",
                            stale,
                            1000,
                            start,
                            System.nanoTime(),
                            applied ? History.Outcome.APPLIED : History.Outcome.REJECTED,
                            ""));
            assertThat(applied).isTrue();
            // The one stale write: after b's entries in the log, with b's token in the counter,
            // sent after b's term was reported and after b's writes had completed.
            harness.assertCaught(
                    harness.check(),
                    "mark lost while a stale token is held elsewhere",
                    at,
                    Kind.LOG_ORDER,
                    Kind.NEWER_TERM,
                    Kind.STALE_WRITE,
                    Kind.REAL_TIME_ORDER);
        }
    }

    @Test
    void scriptsFlushedUnderLoad(RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            harness.timings(Duration.ofMillis(200), Duration.ofMillis(40), Duration.ofMillis(10));
            for (int i = 0; i < 4; i++) {
                harness.candidate("c" + i, Workload.steady(Duration.ofMillis(1)).writesPerTerm(5));
            }
            long start = System.nanoTime();
            int flushes = 0;
            while (System.nanoTime() - start < Duration.ofSeconds(3).toNanos()) {
                harness.control()
                        .execute(
                                (org.springframework.data.redis.core.RedisCallback<Object>)
                                        connection -> {
                                            connection.scriptingCommands().scriptFlush();
                                            return null;
                                        });
                flushes++;
                // Opens the window between two flushes; not a synchronisation.
                Thread.sleep(20);
            }
            harness.fault("SCRIPT FLUSH x" + flushes + " under load", start, System.nanoTime());
            Figures.count("script flushes under load", flushes);
            Checker.Report report = harness.check();
            Harness.assertSafe(report);
            assertThat(harness.history.elections()).hasSizeGreaterThan(20);
            assertThat(harness.history.failures()).noneMatch(f -> f.error().contains("NOSCRIPT"));
            assertThat(harness.history.writes()).noneMatch(w -> w.error().contains("NOSCRIPT"));
        }
    }
}
