package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Many electors contending for one name with short leases, short terms and random resignations:
 * thousands of terms, every token unique, no stale write applied.
 */
@ExtendWith(RedisExtension.class)
class ContentionTests {

    @Test
    void manyElectorsMintThousandsOfUniqueTermsAndNoStaleWriteIsApplied(
            RedisServer server, TestInfo info) throws Exception {
        Random random = Seeds.random(info);
        int electors = 8;
        int terms = Seeds.soak() ? 20_000 : 2_000;
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.timings(Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofMillis(5));
            // No proxies: this scenario's faults are the contention itself and resignations.
            harness.direct = true;
            for (int i = 0; i < electors; i++) {
                // Each term applies 1 to 4 writes, then the task returns and the term ends.
                harness.candidate(
                        "c" + i,
                        Workload.steady(Duration.ZERO).writesPerTerm(1 + random.nextInt(4)));
            }
            long deadline =
                    System.nanoTime()
                            + scaled(Duration.ofSeconds(Seeds.soak() ? 600 : 40)).toNanos();
            List<Candidate> candidates = harness.candidates();
            while (harness.history.elections().size() < terms && System.nanoTime() - deadline < 0) {
                // Resignations from outside, at random moments, end terms mid-write.
                Candidate victim = candidates.get(random.nextInt(candidates.size()));
                victim.elector.resign();
                Awaitility.await()
                        .pollDelay(Duration.ofMillis(random.nextInt(5)))
                        .atMost(scaled(Duration.ofSeconds(1)))
                        .until(() -> true);
            }
            for (Candidate candidate : candidates) {
                candidate.close();
            }
            int elected = harness.history.elections().size();
            Figures.count("contention: terms", elected);
            Figures.count("rounds: contention terms", elected);
            System.out.println("[redlease-reliability] contention terms=" + elected);
            assertThat(elected).as("terms elected in the time box").isGreaterThanOrEqualTo(terms);
            Checker.Report report = harness.check();
            Harness.assertSafe(report);
            assertThat(report.applied()).isGreaterThan(terms);
        }
    }
}
