package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.reliability.Checker.Kind;
import io.redlease.reliability.History.Outcome;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The leader's whole JVM is frozen with {@code SIGSTOP} past its lease (a long GC pause, a stalled
 * VM), a successor is elected and writes, then the old leader is continued: its writes are fenced
 * out and it steps down. The mutant, which writes without the fence, must be caught by the checker.
 */
@ExtendWith(RedisExtension.class)
class ProcessPauseTests {

    @Test
    void pausedLeaderJvmIsFencedOutWhenItResumesAndStepsDown(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            long resumedAt = pauseTheLeaderJvm(harness, true);
            List<History.Write> late =
                    harness.history.writes("a").stream()
                            .filter(w -> w.start() - resumedAt > 0)
                            .toList();
            assertThat(late).isNotEmpty().noneMatch(w -> w.outcome() == Outcome.APPLIED);
            assertThat(late).anyMatch(w -> w.outcome() == Outcome.REJECTED);
            harness.assertLeaderBackAfterHeal(
                    "leader JVM paused", resumedAt, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void mutantWritingWithoutTheFenceIsCaughtByTheChecker(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            pauseTheLeaderJvm(harness, false);
            Checker.Report report = harness.check();
            // The resumed mutant's writes land after the successor's: every write-order rule.
            harness.assertCaught(
                    report,
                    "mutant: unfenced writes under a JVM pause",
                    harness.faultStart("leader JVM SIGSTOP"),
                    Kind.LOG_ORDER,
                    Kind.NEWER_TERM,
                    Kind.STALE_WRITE,
                    Kind.REAL_TIME_ORDER);
        }
    }

    /** Returns when the old leader was continued. */
    private static long pauseTheLeaderJvm(Harness harness, boolean fenced) {
        ChildCandidate a = harness.child("a", fenced);
        Awaitility.await().atMost(scaled(Duration.ofSeconds(10))).until(a::isLeader);
        harness.awaitApplied("a", 3);
        Candidate b = harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
        long pausedAt = System.nanoTime();
        a.pause();
        // Leading and recorded: the history records the election in onElected, on the callback
        // lane, after the term starts.
        Harness.awaitLeading(b, Duration.ofSeconds(5));
        long electedAt = harness.history.elections("b").get(0).at();
        Figures.duration(
                "failover: leader JVM SIGSTOPped -> successor elected", electedAt - pausedAt);
        harness.awaitApplied("b", 3);
        long resumedAt = System.nanoTime();
        a.resume();
        harness.fault("leader JVM SIGSTOP past the TTL", pausedAt, resumedAt);
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(5)))
                .until(() -> !harness.history.stepDowns("a").isEmpty());
        Figures.duration(
                "step-down: paused leader JVM, after SIGCONT",
                harness.history.stepDowns("a").get(0).at() - resumedAt);
        // Its last word, the write it makes on the way out, comes after the step-down.
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(5)))
                .until(
                        () ->
                                harness.history.writes("a").stream()
                                        .anyMatch(w -> w.start() - resumedAt > 0 && w.end() > 0));
        return resumedAt;
    }
}
