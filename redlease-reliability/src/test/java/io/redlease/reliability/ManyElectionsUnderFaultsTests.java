package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * 1,000 elections (10,000 with {@code -Psoak}) among six candidates behind their own proxies, with
 * short terms (TTL 200 ms, three writes per term) and resignations from outside, through a fault
 * every 100 elections: alternately the leader partitioned for 300 ms and Redis stalled ({@code
 * CLIENT PAUSE}) for 300 ms, both longer than the TTL. After each fault a term must be elected
 * within TTL + acquire interval (+ slack) of the heal; at the end the whole history is checked.
 */
@ExtendWith(RedisExtension.class)
class ManyElectionsUnderFaultsTests {

    private static final Duration HOLD = Duration.ofMillis(300);

    @Test
    void aThousandElectionsThroughPartitionsAndStallsStaySafeAndLive(
            @Dedicated RedisServer server, TestInfo info) throws Exception {
        Random random = Seeds.random(info);
        int target = Seeds.soak() ? 10_000 : 1_000;
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.timings(Duration.ofMillis(200), Duration.ofMillis(40), Duration.ofMillis(10));
            for (int i = 0; i < 6; i++) {
                harness.candidate("c" + i, Workload.steady(Duration.ofMillis(1)).writesPerTerm(3));
            }
            List<Candidate> candidates = harness.candidates();
            Duration bound = harness.ttl.plus(harness.acquireInterval).plus(Harness.SLACK);
            int partitions = 0;
            int stalls = 0;
            int nextFault = 100;
            while (harness.history.elections().size() < target) {
                int elections = harness.history.elections().size();
                if (elections >= nextFault) {
                    nextFault += 100;
                    long start = System.nanoTime();
                    String what;
                    if ((partitions + stalls) % 2 == 0) {
                        Candidate victim =
                                candidates.stream()
                                        .filter(Candidate::isLeader)
                                        .findFirst()
                                        .orElse(candidates.get(random.nextInt(candidates.size())));
                        victim.proxy.blackhole();
                        // Holds the partition past the TTL: a fault window, not a synchronisation.
                        Thread.sleep(HOLD.toMillis());
                        victim.proxy.pass();
                        what = "partition of the leader";
                        partitions++;
                    } else {
                        server.clientPause(HOLD);
                        // PING waits until the pause is over: Redis answers again from here on.
                        server.command("PING");
                        what = "Redis stall (CLIENT PAUSE)";
                        stalls++;
                    }
                    long healed = System.nanoTime();
                    harness.fault("many elections: " + what, start, healed);
                    harness.await(
                            "a term elected after the " + what,
                            bound,
                            () ->
                                    harness.history.elections().stream()
                                            .anyMatch(e -> e.at() - healed > 0));
                    Figures.duration(
                            "many elections: " + what + " healed -> next term elected",
                            harness.history.elections().stream()
                                            .mapToLong(History.Election::at)
                                            .filter(at -> at - healed > 0)
                                            .min()
                                            .orElseThrow()
                                    - healed);
                } else {
                    // Resignations from outside end terms mid-write; then wait for the next
                    // election (bounded: a missing one fails here, not by the time box).
                    candidates.get(random.nextInt(candidates.size())).elector.resign();
                    harness.await(
                            "the next election after " + elections,
                            Duration.ofSeconds(5),
                            () -> harness.history.elections().size() > elections);
                }
            }
            int elected = harness.history.elections().size();
            Figures.count("many elections under faults: terms", elected);
            Figures.count("many elections under faults: partitions", partitions);
            Figures.count("many elections under faults: stalls", stalls);
            Checker.Report report = harness.check();
            Harness.assertSafe(report);
            assertThat(elected).isGreaterThanOrEqualTo(target);
            assertThat(partitions + stalls).isGreaterThanOrEqualTo(target / 100 - 1);
            assertThat(report.applied()).isGreaterThan(elected);
        }
    }
}
