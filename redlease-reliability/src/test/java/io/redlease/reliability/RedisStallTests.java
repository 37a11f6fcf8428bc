package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Redis itself stalls for longer than the lease ({@code CLIENT PAUSE}, {@code DEBUG SLEEP}, {@code
 * SIGSTOP}): the leader steps down by its own deadline, no stale write is applied, and a leader is
 * back within TTL + acquire interval of the stall ending.
 */
@ExtendWith(RedisExtension.class)
class RedisStallTests {

    private static final Duration STALL = Duration.ofMillis(1200);

    @Test
    void clientPauseLongerThanTheLease(@Dedicated RedisServer server, TestInfo info)
            throws Exception {
        stall(server, info, "CLIENT PAUSE", () -> server.clientPause(STALL), null);
    }

    @Test
    void debugSleepLongerThanTheLease(@Dedicated RedisServer server, TestInfo info)
            throws Exception {
        stall(server, info, "DEBUG SLEEP", () -> server.debugSleep(STALL), null);
    }

    @Test
    void redisProcessStoppedLongerThanTheLease(@Dedicated RedisServer server, TestInfo info)
            throws Exception {
        stall(server, info, "redis-server SIGSTOP", server::pause, server::resume);
    }

    /**
     * Now that a term superseded by its own late acquire steps down and acquires never overlap,
     * nothing queued at Redis during the stall can take the lease from the first leader after it:
     * the old leader's renewals and release check its id, and each elector has at most one acquire
     * in flight, which the next takes over. The first term after the stall must stay.
     */
    @Test
    void firstTermAfterAStallStays(@Dedicated RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            Candidate a = harness.candidate("a", Workload.steady(Duration.ofMillis(2)));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            harness.awaitApplied("a", 3);
            harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
            long began = System.nanoTime();
            server.clientPause(STALL);
            harness.await(
                    "a steps down during the stall",
                    Duration.ofSeconds(3),
                    () -> !harness.history.termEnds("a").isEmpty());
            // PING waits until the pause is over: Redis answers again from here on.
            server.command("PING");
            long healed = System.nanoTime();
            harness.fault("Redis stalled: CLIENT PAUSE (strict)", began, healed);
            harness.assertLeaderBackAfterHeal(
                    "Redis stalled: CLIENT PAUSE (strict)", healed, Duration.ofSeconds(1), false);
            Harness.assertSafe(harness.check());
        }
    }

    /**
     * Starts the stall; a null {@code heal} means the stall ends by itself after {@link #STALL}.
     */
    private static void stall(
            RedisServer server, TestInfo info, String what, Runnable start, Runnable heal)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            Candidate a = harness.candidate("a", Workload.steady(Duration.ofMillis(2)));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
            harness.awaitApplied("a", 3);
            long began = System.nanoTime();
            start.run();
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(3)))
                    .until(() -> !harness.history.termEnds("a").isEmpty());
            Figures.duration(
                    "step-down: Redis stalled (" + what + "), after the stall began",
                    harness.history.termEnds("a").get(0).at() - began);
            long healed;
            if (heal != null) {
                heal.run();
                healed = System.nanoTime();
            } else {
                healed = began + STALL.toNanos();
            }
            harness.fault("Redis stalled: " + what, began, healed);
            harness.assertLeaderBackAfterHeal(
                    "Redis stalled: " + what, healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
        }
    }
}
