package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Fencer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A leader whose clock runs fast or slow (injected with {@code ElectorConfig.Builder.clock}), cut
 * off from Redis. A fast clock only makes it step down early. A slow clock makes it believe it
 * leads after its lease lapsed and a successor was elected: leases cannot prevent that, the fence
 * makes it harmless.
 */
@ExtendWith(RedisExtension.class)
class ClockSkewTests {

    static LongSupplier skewed(double rate) {
        long base = System.nanoTime();
        return () -> base + (long) ((System.nanoTime() - base) * rate);
    }

    @Test
    void fastClockStepsDownEarly(RedisServer server, TestInfo info) throws Exception {
        Duration overlap = run(server, info, 2.0, "fast clock (x2)");
        assertThat(overlap).isNegative();
    }

    @Test
    void slowClockOutlivesItsLeaseButItsWritesAreFencedOut(RedisServer server, TestInfo info)
            throws Exception {
        // At a quarter of the real rate the lease of 500 ms lasts 2 s by the leader's clock.
        Duration overlap = run(server, info, 0.25, "slow clock (x0.25)");
        // The slow leader still believed it led after the successor was elected.
        assertThat(overlap).isPositive();
    }

    /** Returns how long the skewed leader kept acting after the successor was elected. */
    private static Duration run(RedisServer server, TestInfo info, double rate, String what)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            Candidate a =
                    harness.candidate(
                            "a",
                            Workload.steady(Duration.ofMillis(2)).detachedWrites(),
                            config -> config.clock(skewed(rate)));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            harness.awaitApplied("a", 3);
            Candidate b = harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
            // B is a follower now; A leads (re-elected if a load spike cost it a term meanwhile).
            // The term's fencer, as the leader's own code holds it, read in one step with its
            // token (the term may end between two separate reads).
            Fencer staleFencer =
                    Awaitility.await()
                            .atMost(scaled(Duration.ofSeconds(5)))
                            .until(() -> a.elector.fencer(), Optional::isPresent)
                            .orElseThrow();
            long tokenA = staleFencer.token();
            long start = System.nanoTime();
            // Cut off: renewals and the write in flight hang (a link that only slowed down would
            // still deliver the renewals late, keeping the lease alive at Redis).
            a.proxy.blackhole();
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            long elected =
                    harness.history.elections().stream()
                            .filter(e -> e.token() > tokenA)
                            .findFirst()
                            .orElseThrow()
                            .at();
            harness.awaitApplied("b", 3);
            long healed;
            if (rate < 1) {
                // Heal while the slow leader still believes it leads: what it writes now reaches
                // Redis, after the successor's election.
                assertThat(termEnd(harness, tokenA))
                        .as(() -> "a still believes it leads; " + harness.history.summary())
                        .isNull();
                healed = System.nanoTime();
                a.proxy.pass();
            } else {
                healed = 0;
            }
            harness.await(
                    "a's term " + tokenA + " ends",
                    Duration.ofSeconds(5),
                    () -> termEnd(harness, tokenA) != null);
            long ended = termEnd(harness, tokenA).at();
            Figures.duration("step-down: " + what + ", after the cut", ended - start);
            if (rate >= 1) {
                healed = System.nanoTime();
                a.proxy.pass();
            }
            harness.fault(what + " and a partition", start, healed);
            harness.assertLeaderBackAfterHeal(what, healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
            if (rate < 1) {
                // Whether the workload got a write in between the heal and the step-down is a
                // race (a renewal held by the cut, delivered at the heal, ends the term at once);
                // the checker above judged any that did. A write with the term's fencer, reaching
                // Redis after the successor's election, is refused.
                assertThat(staleFencer.set(harness.name + ":late", "stale")).isFalse();
                assertThat(server.command("EXISTS", harness.name + ":late")).isEqualTo(0L);
            }
            return Duration.ofNanos(ended - elected);
        }
    }

    private static History.TermEnd termEnd(Harness harness, long token) {
        return harness.history.termEnds("a").stream()
                .filter(t -> t.token() == token)
                .findFirst()
                .orElse(null);
    }
}
