package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.reliability.History.Outcome;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Graceful shutdown while the leader task is still writing: {@code stop()} ends the term, waits for
 * the task (including its last write on the way out), then releases; nothing of the old term is
 * applied after that, and the successor starts with a greater token.
 */
@ExtendWith(RedisExtension.class)
class ShutdownTests {

    @Test
    void stopWaitsForTheWritingTaskAndNoWriteOfTheOldTermLandsAfterTheRelease(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            // A long lease, so that the term in progress is still the one being stopped.
            harness.timings(Duration.ofSeconds(2), Duration.ofMillis(200), Duration.ofMillis(200));
            Candidate a =
                    harness.candidate(
                            "a", Workload.steady(Duration.ZERO).withLastWord().detachedWrites());
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            Candidate b = harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
            harness.awaitApplied("a", 20);
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            long stopping = System.nanoTime();
            a.elector.stop();
            long stopped = System.nanoTime();
            Figures.duration("graceful stop() while writing", stopped - stopping);
            assertThat(harness.control().opsForValue().get(harness.name + ":leader"))
                    .isNotEqualTo("a");
            assertThat(harness.history.writes("a"))
                    .allSatisfy(w -> assertThat(w.end() - stopped).isNegative());
            History.Write last =
                    harness.history.writes("a").get(harness.history.writes("a").size() - 1);
            // The last word was written while the lease was still ours: applied.
            assertThat(last.start() - stopping)
                    .as(() -> "the last word starts after stop(); " + harness.history.summary())
                    .isPositive();
            assertThat(last.outcome()).isEqualTo(Outcome.APPLIED);
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            assertThat(b.lastElection().token()).isGreaterThan(last.token());
            // The release comes after the task's last write, and the successor after the
            // release (it may be woken before stop() has returned to its caller).
            assertThat(b.lastElection().at() - last.end()).isPositive();
            Figures.duration(
                    "hand-off after graceful stop() was called", b.lastElection().at() - stopping);
            harness.awaitApplied("b", 3);
            Harness.assertSafe(harness.check());
        }
    }
}
