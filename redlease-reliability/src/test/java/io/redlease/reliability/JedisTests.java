package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.Dedicated;
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
 * The core scenarios with every candidate on a {@code JedisConnectionFactory} (blocking calls, a
 * pool of connections) instead of Lettuce: contention, a writer parked past its term, a partitioned
 * leader, a Redis stall, a crash and restart with AOF {@code always}, and a graceful hand-off
 * announced by a release notification. The whole short tier can also run on Jedis with {@code
 * -Dredlease.test.client=jedis} (the Sentinel, Cluster, TLS and child-JVM scenarios stay on
 * Lettuce).
 */
@ExtendWith(RedisExtension.class)
class JedisTests {

    private static final Duration STEADY = Duration.ofMillis(2);

    private static Harness jedis(TestInfo info, RedisServer server) {
        Harness harness = new Harness(info, server.host(), server.port());
        harness.jedis = true;
        return harness;
    }

    @Test
    void contentionOnJedis(RedisServer server, TestInfo info) throws Exception {
        Random random = Seeds.random(info);
        try (Harness harness = jedis(info, server)) {
            harness.direct = true;
            harness.timings(Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofMillis(5));
            for (int i = 0; i < 6; i++) {
                harness.candidate(
                        "c" + i,
                        Workload.steady(Duration.ZERO).writesPerTerm(1 + random.nextInt(4)));
            }
            List<Candidate> candidates = harness.candidates();
            while (harness.history.elections().size() < 300) {
                int elections = harness.history.elections().size();
                candidates.get(random.nextInt(candidates.size())).elector.resign();
                harness.await(
                        "the next election after " + elections,
                        Duration.ofSeconds(5),
                        () -> harness.history.elections().size() > elections);
            }
            Figures.count("jedis: contention terms", harness.history.elections().size());
            Checker.Report report = harness.check();
            Harness.assertSafe(report);
            assertThat(report.applied()).isGreaterThan(300);
        }
    }

    @Test
    void writerParkedPastItsTermIsFencedOutOnJedis(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = jedis(info, server)) {
            NetworkFaultTests.parkTheLeadersWriter(harness, true);
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void partitionedLeaderStepsDownAndIsFencedOutOnJedis(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = jedis(info, server)) {
            Candidate a = harness.candidate("a", Workload.steady(STEADY));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            Candidate b = harness.candidate("b", Workload.steady(STEADY));
            harness.awaitApplied("a", 3);
            long cut = System.nanoTime();
            a.proxy.blackhole();
            Harness.awaitLeading(b, Duration.ofSeconds(5));
            harness.await("a's term ends", Duration.ofSeconds(5), () -> !a.elector.isLeader());
            Figures.duration(
                    "jedis: failover, leader partitioned -> successor elected",
                    b.lastElection().at() - cut);
            harness.awaitApplied("b", 3);
            long healed = System.nanoTime();
            a.proxy.pass();
            harness.fault("jedis: leader partitioned", cut, healed);
            harness.assertLeaderBackAfterHeal(
                    "jedis: leader partitioned", healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
        }
    }

    /**
     * The leader task's fenced write hangs on a partitioned link; when the term ends the task's
     * thread is interrupted. A Jedis socket read ignores that, so on a blocking client the core
     * waits for the write on its pool and the interrupt frees the caller at once; the write is
     * still refused if it ever arrives.
     */
    @Test
    void leaderTaskInAFencedWriteIsReleasedWhenItsTermEndsOnJedis(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = jedis(info, server)) {
            Candidate a = harness.candidate("a", Workload.steady(STEADY));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            harness.awaitApplied("a", 3);
            long cut = System.nanoTime();
            a.proxy.blackhole();
            harness.await("a steps down", Duration.ofSeconds(5), () -> !a.elector.isLeader());
            // On Lettuce the task stops acting within the TTL (+ slack) of the cut
            // (NetworkFaultTests); here it gets as long again after the step-down, against Jedis'
            // read timeout of 5 s.
            harness.await(
                    "a's task leaves its fenced write after its term ended",
                    harness.ttl.plus(Harness.SLACK),
                    () -> !harness.history.termEnds("a").isEmpty());
            a.proxy.pass();
            harness.fault("jedis: leader partitioned mid-write", cut, System.nanoTime());
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void redisStallOnJedis(@Dedicated RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = jedis(info, server)) {
            harness.direct = true;
            Candidate a = harness.candidate("a", Workload.steady(STEADY));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            harness.candidate("b", Workload.steady(STEADY));
            harness.awaitApplied("a", 3);
            long began = System.nanoTime();
            server.clientPause(Duration.ofMillis(1200));
            harness.await(
                    "a steps down during the stall",
                    Duration.ofSeconds(3),
                    () -> !harness.history.termEnds("a").isEmpty());
            // PING waits until the pause is over: Redis answers again from here on.
            server.command("PING");
            long healed = System.nanoTime();
            harness.fault("jedis: Redis stalled (CLIENT PAUSE)", began, healed);
            harness.assertLeaderBackAfterHeal(
                    "jedis: Redis stalled", healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void crashRestartWithAppendFsyncAlwaysOnJedis(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = jedis(info, server)) {
            harness.direct = true;
            harness.candidate("a", Workload.steady(STEADY).writesPerTerm(10));
            harness.candidate("b", Workload.steady(STEADY).writesPerTerm(10));
            harness.await(
                    "five terms",
                    Duration.ofSeconds(10),
                    () -> harness.history.elections().size() >= 5);
            long start = System.nanoTime();
            server.kill();
            server.restart();
            long healed = System.nanoTime();
            harness.fault("jedis: Redis crash and restart, AOF always", start, healed);
            int before = harness.history.elections().size();
            harness.await(
                    "five terms after the restart",
                    Duration.ofSeconds(10),
                    () -> harness.history.elections().size() >= before + 5);
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void gracefulHandOffIsAnnouncedOnJedis(RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = jedis(info, server)) {
            harness.direct = true;
            // Only the release notification explains a hand-off well within the acquire interval
            // (a polling follower would make the bound one time in ten).
            harness.timings(
                    Duration.ofSeconds(30),
                    Duration.ofSeconds(1),
                    ReleaseNotificationRecoveryTests.ACQUIRE);
            Candidate a = harness.candidate("a", Workload.steady(Duration.ofMillis(5)));
            Harness.awaitLeading(a, Duration.ofSeconds(10));
            Candidate b = harness.candidate("b", Workload.steady(Duration.ofMillis(5)));
            String channel = harness.name + ":released";
            harness.await(
                    "b subscribes to " + channel,
                    Duration.ofSeconds(15),
                    () ->
                            server.command("PUBSUB", "NUMSUB", channel) instanceof List<?> reply
                                    && reply.get(1) instanceof Long n
                                    && n >= 1);
            long stop = System.nanoTime();
            a.close();
            // Its election is recorded by its observer, on the election's lane: wait for it.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> b.isLeader() && !harness.history.elections("b").isEmpty());
            long handOff = b.lastElection().at() - stop;
            Figures.duration("jedis: graceful hand-off", handOff);
            assertThat(Duration.ofNanos(handOff))
                    .isLessThan(ReleaseNotificationRecoveryTests.HAND_OFF_BOUND);
            Harness.assertSafe(harness.check());
        }
    }
}
