package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.ElectorConfig;
import io.redlease.test.RedisNode;
import io.redlease.test.RedisSentinelSetup;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Redis Sentinel (one primary, one replica, three Sentinels on loopback) through Spring Data
 * Redis's {@code RedisSentinelConfiguration} and Lettuce: leadership recovers after the primary is
 * killed and after a manual failover, the NOSCRIPT path works on the promoted primary, the token
 * regression when a failover loses replication is reproduced, and the opt-in replica
 * acknowledgement prevents it.
 */
class SentinelTests {

    private static final Duration DOWN_AFTER = Duration.ofMillis(500);

    /**
     * How long a failover may take: no correctness bound, only a guard against a hang. Sentinel
     * retries an aborted failover after twice its failover timeout (3 s), and a loaded machine
     * (Sentinel's timers run late) can need several attempts.
     */
    private static final Duration FAILOVER = Duration.ofSeconds(60);

    /** Longer than the harness default: a Sentinel failover takes seconds, not milliseconds. */
    private static final Duration TTL = Duration.ofMillis(1000);

    @Test
    void leadershipRecoversAfterThePrimaryIsKilled(TestInfo info) throws Exception {
        failover(info, "primary killed", setup -> setup.currentPrimary().kill(), false);
    }

    @Test
    void leadershipRecoversAfterAManualFailoverAndScriptsAreReloadedOnThePromotedPrimary(
            TestInfo info) throws Exception {
        failover(info, "SENTINEL FAILOVER", RedisSentinelSetup::failover, true);
    }

    /**
     * Waits for the promotion after a fault. A manual failover that Sentinel aborted is asked for
     * again: Sentinel gives up a failover whose promoted replica does not report its new role
     * within the failover timeout (3 s; a loaded machine can miss it), and retries only the
     * failovers it started itself (a primary it finds down), never a manual one.
     */
    private static RedisNode awaitPromotion(
            RedisSentinelSetup setup, int oldPrimary, boolean manual) {
        long deadline = System.nanoTime() + scaled(FAILOVER).toNanos();
        while (true) {
            try {
                return setup.awaitNewPrimary(oldPrimary, Duration.ofSeconds(10));
            } catch (IllegalStateException notYet) {
                if (System.nanoTime() - deadline > 0) {
                    throw notYet;
                }
                if (manual) {
                    Figures.note("Sentinel: a manual failover was aborted and asked for again");
                    askAgain(setup);
                }
            }
        }
    }

    private static void askAgain(RedisSentinelSetup setup) {
        try {
            setup.failover();
        } catch (RuntimeException inProgress) {
            // INPROG: the earlier attempt is still running; the wait goes on.
        }
    }

    private static void failover(
            TestInfo info, String what, Consumer<RedisSentinelSetup> fault, boolean manual)
            throws Exception {
        try (RedisSentinelSetup setup = RedisSentinelSetup.start(DOWN_AFTER);
                Connections sentinel = new Connections();
                Harness harness = new Harness(info, () -> sentinel.sentinel(setup))) {
            harness.timings(TTL, Duration.ofMillis(200), Duration.ofMillis(200));
            harness.candidate("a", Workload.steady(Duration.ofMillis(5)));
            harness.candidate("b", Workload.steady(Duration.ofMillis(5)));
            harness.awaitWritingLeader(3);
            int oldPrimary = setup.currentPrimaryPort();
            RedisNode replica = setup.initialReplica();
            // Scripts are not replicated: the replica's cache is empty, so the promoted primary
            // answers EVALSHA with NOSCRIPT and the client falls back to EVAL.
            assertThat(replica.info("memory", "number_of_cached_scripts")).isEqualTo("0");
            long start = System.nanoTime();
            fault.accept(setup);
            RedisNode promoted = awaitPromotion(setup, oldPrimary, manual);
            long promotedAt = System.nanoTime();
            harness.fault("Sentinel failover: " + what, start, promotedAt);
            Figures.duration("Sentinel: " + what + " -> replica promoted", promotedAt - start);
            RedisNode old = setup.node(oldPrimary);
            if (old != null && old.isAlive()) {
                // Until Sentinel turns it into a replica (it waits about 8 s before it converts
                // an old primary it finds still running), the old primary accepts writes that
                // the switch to the new one throws away.
                // Redis drops its clients when its role changes (and Sentinel kills them on both
                // nodes): a poll whose connection is reset meanwhile just polls again.
                Awaitility.await()
                        .atMost(scaled(Duration.ofSeconds(20)))
                        .pollInterval(Duration.ofMillis(20))
                        .ignoreExceptionsInstanceOf(UncheckedIOException.class)
                        .until(() -> "slave".equals(old.info("replication", "role")));
                Figures.duration(
                        "Sentinel: " + what + " -> old primary demoted", System.nanoTime() - start);
            }
            // Writes applied on the promoted primary itself: its log grows.
            long logBefore = llen(promoted, harness);
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(20)))
                    .pollInterval(Duration.ofMillis(5))
                    .ignoreExceptionsInstanceOf(UncheckedIOException.class)
                    .until(
                            () ->
                                    promoted.command("LLEN", harness.log.key()) instanceof Long n
                                            && n > logBefore + 3);
            Figures.duration(
                    "Sentinel: " + what + " -> writes applied on the promoted primary",
                    System.nanoTime() - start);
            assertThat(Long.parseLong(promoted.info("memory", "number_of_cached_scripts")))
                    .as("scripts loaded on the promoted primary through the NOSCRIPT fallback")
                    .isPositive();
            assertThat(harness.history.failures()).noneMatch(f -> f.error().contains("NOSCRIPT"));
            assertThat(harness.history.writes()).noneMatch(w -> w.error().contains("NOSCRIPT"));
            harness.stopAll();
            // Writes acknowledged by the old primary but not yet replicated may be lost; order,
            // terms and tokens are still checked.
            Harness.assertSafe(harness.check(false));
        }
    }

    /**
     * The leader of term T+1, won on the primary after the replica stopped receiving the
     * replication stream, goes down with the primary (it is stopped first, so that it does not
     * contend on the promoted replica). The replica is promoted with the counter at T, and the
     * successor is elected there with token T+1 again: the token was handed out twice.
     */
    @Test
    void failoverThatLosesTheLatestTermHandsItsTokenOutAgainAndTheCheckerDetectsIt(TestInfo info)
            throws Exception {
        try (RedisSentinelSetup setup = RedisSentinelSetup.start(DOWN_AFTER);
                Connections sentinel = new Connections();
                Harness harness = new Harness(info, () -> sentinel.sentinel(setup))) {
            harness.timings(TTL, Duration.ofMillis(200), Duration.ofMillis(500));
            Candidate a = harness.candidate("a", Workload.steady(Duration.ofMillis(5)));
            long replicated = leadInSyncThenHoldReplication(harness, setup, a);
            // A new term starts on the primary alone.
            a.elector.resign();
            harness.await(
                    "a new term on the primary",
                    Duration.ofSeconds(10),
                    () -> a.lastElection().token() > replicated);
            long lost = a.lastElection().token();
            assertThat(lost).isEqualTo(replicated + 1);
            harness.awaitApplied("a", applied(harness, "a") + 3);
            a.close();
            RedisNode promoted = killPrimaryAndPromoteReplica(harness, setup);
            assertThat(promoted.command("GET", harness.log.counterKey()))
                    .as("the promoted replica's counter")
                    .isEqualTo(Long.toString(replicated));
            Candidate b = successor(harness, config -> {});
            harness.awaitApplied("b", 3);
            assertThat(b.lastElection().token()).isEqualTo(lost);
            harness.stopAll();
            Checker.Report report = harness.check(false);
            // Only the token handed out twice; the promoted primary's log is in order.
            harness.assertCaught(
                    report,
                    "Sentinel failover lost the latest term (asynchronous replication)",
                    harness.faultStart("replication stream held"),
                    Checker.Kind.DUPLICATE_TOKEN);
            assertThat(report.violations())
                    .allMatch(
                            v ->
                                    v.message()
                                            .startsWith(
                                                    "duplicate token " + lost + ": elected by a"));
        }
    }

    /**
     * The same failover with {@code replicaAcknowledgement(1, 100ms)}: no term is started on the
     * primary while the replica cannot acknowledge it, the promoted replica (alone, so still
     * unacknowledged) starts none either until the old primary is back as its replica, and then the
     * successor's token is greater than every started term's.
     */
    @Test
    void replicaAcknowledgementKeepsAnUnreplicatedTermFromStartingSoNoTokenIsHandedOutTwice(
            TestInfo info) throws Exception {
        try (RedisSentinelSetup setup = RedisSentinelSetup.start(DOWN_AFTER);
                Connections sentinel = new Connections();
                Harness harness = new Harness(info, () -> sentinel.sentinel(setup))) {
            harness.timings(TTL, Duration.ofMillis(200), Duration.ofMillis(500));
            Consumer<ElectorConfig.Builder> acknowledged =
                    config -> config.replicaAcknowledgement(1, Duration.ofMillis(100));
            Candidate a =
                    harness.candidate("a", Workload.steady(Duration.ofMillis(5)), acknowledged);
            long replicated = leadInSyncThenHoldReplication(harness, setup, a);
            a.elector.resign();
            // Every term won on the primary now waits for an acknowledgement that cannot come:
            // it is released unstarted and reported.
            harness.await(
                    "terms refused on the primary",
                    Duration.ofSeconds(10),
                    () -> acknowledgementFailures(harness) >= 2);
            a.close();
            assertThat(harness.history.elections()).hasSize(1);
            RedisNode old = setup.currentPrimary();
            RedisNode promoted = killPrimaryAndPromoteReplica(harness, setup);
            assertThat(promoted.command("GET", harness.log.counterKey()))
                    .isEqualTo(Long.toString(replicated));
            Candidate b = successor(harness, acknowledged);
            // The promoted primary has no replica, so no term can be acknowledged there either.
            long failures = acknowledgementFailures(harness);
            harness.await(
                    "terms refused on the promoted primary",
                    Duration.ofSeconds(10),
                    () -> acknowledgementFailures(harness) > failures);
            assertThat(harness.history.elections()).hasSize(1);
            // The old primary comes back, empty (no persistence), as the new primary's replica.
            old.restart();
            old.command("REPLICAOF", promoted.host(), Integer.toString(promoted.port()));
            long rejoined = System.nanoTime();
            Harness.awaitLeading(b, Duration.ofSeconds(15));
            Figures.duration(
                    "Sentinel with replica acknowledgement: replica back -> leader elected",
                    b.lastElection().at() - rejoined);
            harness.awaitApplied("b", 3);
            Figures.count(
                    "terms refused for want of a replica acknowledgement",
                    acknowledgementFailures(harness));
            harness.stopAll();
            Harness.assertSafe(harness.check(false));
            assertThat(b.lastElection().token()).isGreaterThan(replicated);
        }
    }

    /**
     * Reads the length of the suite's log on a node, again if the fault resets the connection
     * (Sentinel kills the clients of the nodes whose role it changes).
     */
    private static long llen(RedisNode node, Harness harness) {
        return Awaitility.await()
                                .atMost(scaled(Duration.ofSeconds(10)))
                                .pollInterval(Duration.ofMillis(20))
                                .ignoreExceptionsInstanceOf(UncheckedIOException.class)
                                .until(() -> node.command("LLEN", harness.log.key()), reply -> true)
                        instanceof Long n
                ? n
                : 0;
    }

    /**
     * Starts the successor on the promoted primary with a warm connection, so that its first
     * acquire is not abandoned at its bound (an abandoned acquire still runs and mints a token for
     * nobody, which would hide the regression behind one more increment).
     */
    private static Candidate successor(Harness harness, Consumer<ElectorConfig.Builder> tweak) {
        Candidate b = harness.unstarted("b", Workload.steady(Duration.ofMillis(5)), tweak);
        harness.await(
                "a connection to the promoted primary",
                Duration.ofSeconds(10),
                () -> {
                    try {
                        b.redis.hasKey(harness.name + ":warm-up");
                        return true;
                    } catch (RuntimeException ex) {
                        return false;
                    }
                });
        b.start();
        return b;
    }

    /**
     * Waits until {@code a} leads and writes and the replica has everything, then holds the
     * replication stream in the proxy between primary and replica; returns the replicated term's
     * token.
     */
    private static long leadInSyncThenHoldReplication(
            Harness harness, RedisSentinelSetup setup, Candidate a) {
        Harness.awaitLeading(a, Duration.ofSeconds(10));
        harness.awaitApplied("a", 3);
        RedisNode primary = setup.currentPrimary();
        RedisNode replica = setup.initialReplica();
        long token = a.lastElection().token();
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(10)))
                .until(
                        () ->
                                Long.toString(token)
                                                .equals(
                                                        replica.command(
                                                                "GET", harness.log.counterKey()))
                                        && primary.info("replication", "master_repl_offset")
                                                .equals(
                                                        replica.info(
                                                                "replication",
                                                                "slave_repl_offset")));
        // From here on the replica receives nothing (chunks are held in the proxy).
        setup.replicationLink().blackhole();
        harness.fault("replication stream held", System.nanoTime(), System.nanoTime());
        return token;
    }

    /** Kills the primary, discards the held replication stream and waits for the promotion. */
    private static RedisNode killPrimaryAndPromoteReplica(
            Harness harness, RedisSentinelSetup setup) {
        RedisNode primary = setup.currentPrimary();
        long start = System.nanoTime();
        primary.kill();
        setup.replicationLink().drop();
        setup.replicationLink().cut();
        RedisNode promoted = setup.awaitNewPrimary(primary.port(), scaled(FAILOVER));
        long promotedAt = System.nanoTime();
        harness.fault("Sentinel failover after the replica missed a term", start, promotedAt);
        Figures.duration("Sentinel: primary killed -> replica promoted", promotedAt - start);
        return promoted;
    }

    private static long acknowledgementFailures(Harness harness) {
        return harness.history.failures().stream()
                .filter(f -> f.error().contains("ReplicaAcknowledgementException"))
                .count();
    }

    private static int applied(Harness harness, String candidate) {
        List<History.Write> writes = harness.history.writes(candidate);
        return (int) writes.stream().filter(w -> w.outcome() == History.Outcome.APPLIED).count();
    }
}
