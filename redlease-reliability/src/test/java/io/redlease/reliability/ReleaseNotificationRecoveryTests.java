package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Release notifications survive a lost connection: after Redis restarts (AOF {@code always}, so the
 * lease survives) and after a follower's connections are reset, the followers subscribe again on
 * their own, and the next graceful hand-off is announced: the successor is elected within
 * milliseconds, not at its next acquire attempt.
 *
 * <p>The acquire interval is 20 s and the hand-off bound 2 s (times {@code
 * -Dredlease.test.timeScale}), so a follower that only polled would meet the bound in one hand-off
 * out of ten, while a loaded machine has ample room; the subscriptions themselves are read from
 * Redis ({@code PUBSUB NUMSUB}).
 */
@ExtendWith(RedisExtension.class)
class ReleaseNotificationRecoveryTests {

    static final Duration ACQUIRE = Duration.ofSeconds(20);

    static final Duration HAND_OFF_BOUND = scaled(Duration.ofSeconds(2));

    @Test
    void followerResubscribesAfterARedisRestartAndTheHandOffIsAnnounced(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            Candidate[] pair = leaderAndFollower(harness);
            long subscribers = awaitSubscribers(harness, server, 2, "before the fault");
            long start = System.nanoTime();
            server.restart();
            long restarted = System.nanoTime();
            harness.fault("Redis restart (release notifications)", start, restarted);
            handOffAfter(harness, server, pair, subscribers, restarted, "Redis restart");
        }
    }

    @Test
    void followerResubscribesAfterARedisRestartOnJedis(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            harness.jedis = true;
            Candidate[] pair = leaderAndFollower(harness);
            long subscribers = awaitSubscribers(harness, server, 2, "before the fault");
            long start = System.nanoTime();
            server.restart();
            long restarted = System.nanoTime();
            harness.fault("Redis restart (release notifications, Jedis)", start, restarted);
            handOffAfter(harness, server, pair, subscribers, restarted, "Redis restart on Jedis");
        }
    }

    @Test
    void followerResubscribesAfterItsConnectionsAreCutAndTheHandOffIsAnnounced(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            Candidate[] pair = leaderAndFollower(harness);
            long subscribers = awaitSubscribers(harness, server, 2, "before the fault");
            long start = System.nanoTime();
            pair[1].proxy.cut();
            long cut = System.nanoTime();
            harness.fault("follower's connections reset (release notifications)", start, cut);
            handOffAfter(harness, server, pair, subscribers, cut, "follower's connections cut");
        }
    }

    /** Starts a leader, then a follower; returns both. */
    private static Candidate[] leaderAndFollower(Harness harness) {
        harness.timings(Duration.ofSeconds(30), Duration.ofSeconds(1), ACQUIRE);
        Candidate a = harness.candidate("a", Workload.steady(Duration.ofMillis(5)));
        Harness.awaitLeading(a, Duration.ofSeconds(10));
        harness.awaitApplied("a", 3);
        Candidate b = harness.candidate("b", Workload.steady(Duration.ofMillis(5)));
        return new Candidate[] {a, b};
    }

    /**
     * Waits until the subscriptions are back, stops the leader and measures the hand-off; the
     * leader must have kept its lease through the fault (checked first).
     */
    private static void handOffAfter(
            Harness harness,
            RedisServer server,
            Candidate[] pair,
            long subscribers,
            long healed,
            String what) {
        Candidate a = pair[0];
        Candidate b = pair[1];
        awaitSubscribers(harness, server, subscribers, "after the " + what);
        Figures.duration(
                "release notifications: " + what + " -> subscribed again",
                System.nanoTime() - healed);
        assertThat(a.isLeader()).as("a kept its lease through the " + what).isTrue();
        assertThat(b.isLeader()).isFalse();
        long stop = System.nanoTime();
        a.close();
        // Its election is recorded by its observer, on the election's lane: wait for the record.
        harness.await(
                "b takes over",
                Duration.ofSeconds(15),
                () -> b.isLeader() && !harness.history.elections("b").isEmpty());
        long handOff = b.lastElection().at() - stop;
        Figures.duration("release notifications: hand-off after the " + what, handOff);
        assertThat(Duration.ofNanos(handOff))
                .as("hand-off after the " + what + " (acquire interval " + ACQUIRE + ")")
                .isLessThan(HAND_OFF_BOUND);
        harness.awaitApplied("b", 3);
        Harness.assertSafe(harness.check());
    }

    /** Waits until at least {@code n} clients subscribe to the election's release channel. */
    private static long awaitSubscribers(Harness harness, RedisServer server, long n, String when) {
        String channel = harness.name + ":released";
        harness.await(
                n + " subscriber(s) of " + channel + " " + when,
                Duration.ofSeconds(15),
                () -> subscribers(server, channel) >= n);
        return subscribers(server, channel);
    }

    private static long subscribers(RedisServer server, String channel) {
        Object reply = server.command("PUBSUB", "NUMSUB", channel);
        return reply instanceof List<?> list && list.size() == 2 && list.get(1) instanceof Long n
                ? n
                : 0;
    }
}
