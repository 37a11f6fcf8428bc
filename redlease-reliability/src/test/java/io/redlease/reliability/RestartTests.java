package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.reliability.Checker.Kind;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Redis crashes ({@code SIGKILL}) and restarts while leaders lead and write, in every persistence
 * mode, several rounds each (a fresh election per round on the same server): how often a token is
 * handed out twice, and that {@code appendfsync always} never hands one out twice.
 *
 * <p>Two workloads: a <em>live leader</em> (two candidates, one long term, a write every 2 ms) and
 * <em>continuous elections</em> (four candidates, five writes per term, so the counter moves many
 * times a second). Whatever a lost data set causes must be a data-loss violation (a token elected
 * twice, a token below one already written), only after the crash, with the history before it
 * clean; and a leader must be back within TTL + acquire interval (+ slack) of the restart.
 */
@ExtendWith(RedisExtension.class)
class RestartTests {

    /** What losing recent writes to the counter, the mark and the log can cause. */
    private static final Set<Kind> DATA_LOSS =
            EnumSet.of(
                    Kind.DUPLICATE_TOKEN,
                    Kind.TOKEN_REGRESSION,
                    Kind.REAL_TIME_ORDER,
                    Kind.STALE_WRITE,
                    Kind.LOG_ORDER);

    private static final int ROUNDS = Seeds.soak() ? 40 : 6;

    @Test
    void withoutPersistenceUnderALiveLeader(@Dedicated RedisServer server, TestInfo info)
            throws Exception {
        rounds(server, info, "no persistence, live leader", false, false);
    }

    @Test
    void withoutPersistenceUnderContinuousElections(@Dedicated RedisServer server, TestInfo info)
            throws Exception {
        rounds(server, info, "no persistence, continuous elections", true, false);
    }

    @Test
    void appendFsyncEverysecUnderContinuousElections(
            @Dedicated(appendOnly = true, appendFsync = "everysec") RedisServer server,
            TestInfo info)
            throws Exception {
        rounds(server, info, "AOF everysec, continuous elections", true, false);
    }

    @Test
    void rdbSnapshotsOnlyUnderContinuousElections(
            @Dedicated(extraArgs = {"--save", "1 1"}) RedisServer server, TestInfo info)
            throws Exception {
        rounds(server, info, "RDB only (save 1 1), continuous elections", true, false);
    }

    @Test
    void appendFsyncAlwaysNeverHandsOutATokenTwice(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        rounds(server, info, "AOF always, continuous elections", true, true);
        rounds(server, info, "AOF always, live leader", false, true);
    }

    /**
     * Runs the rounds; with {@code durable} every round must be clean with the log complete, else
     * whatever is found must be explained by the lost data.
     */
    private static void rounds(
            RedisServer server, TestInfo info, String mode, boolean elections, boolean durable)
            throws Exception {
        int repeated = 0;
        int violated = 0;
        for (int round = 1; round <= ROUNDS; round++) {
            try (Harness harness = new Harness(info, server.host(), server.port())) {
                harness.direct = true;
                Workload workload =
                        elections
                                ? Workload.steady(Duration.ofMillis(2)).writesPerTerm(5)
                                : Workload.steady(Duration.ofMillis(2));
                for (int i = 0; i < (elections ? 4 : 2); i++) {
                    harness.candidate("c" + i, workload);
                }
                harness.await(
                        "five terms before the crash",
                        Duration.ofSeconds(10),
                        () -> harness.history.elections().size() >= (elections ? 5 : 1));
                if (!elections) {
                    harness.awaitWritingLeader(3);
                }
                long crashed = System.nanoTime();
                server.kill();
                server.restart();
                long restarted = System.nanoTime();
                harness.fault("Redis crash and restart (" + mode + ")", crashed, restarted);
                if (elections) {
                    int before = harness.history.elections().size();
                    harness.await(
                            "five terms after the restart",
                            Duration.ofSeconds(10),
                            () -> harness.history.elections().size() >= before + 5);
                    Figures.duration(
                            "Redis crash-restart (" + mode + ") -> first term elected",
                            harness.history.elections().stream()
                                            .mapToLong(History.Election::at)
                                            .filter(at -> at - restarted > 0)
                                            .min()
                                            .orElseThrow()
                                    - restarted);
                } else {
                    // The leader's lease may be gone with the data set: it steps down (LOST)
                    // and someone is elected; a leader must be in place and stay.
                    harness.assertStableLeaderWithin(
                            "Redis crash-restart (" + mode + ")",
                            restarted,
                            Duration.ofMillis(500));
                }
                Checker.Report report = harness.check(durable);
                if (durable) {
                    Harness.assertSafe(report);
                } else {
                    harness.assertWithinBoundary(
                            report, "Redis crash-restart (" + mode + ")", crashed, DATA_LOSS);
                }
                if (report.kinds().contains(Kind.DUPLICATE_TOKEN)) {
                    repeated++;
                }
                if (!report.ok()) {
                    violated++;
                }
            }
        }
        Figures.count("Redis crash-restart (" + mode + "): rounds", ROUNDS);
        Figures.count(
                "Redis crash-restart (" + mode + "): rounds with a token elected twice", repeated);
        Figures.count("Redis crash-restart (" + mode + "): rounds with any violation", violated);
        Figures.note(
                "Redis crash-restart ("
                        + mode
                        + "): a token elected twice in "
                        + repeated
                        + " of "
                        + ROUNDS
                        + " rounds, a violation of any kind in "
                        + violated);
        if (durable) {
            assertThat(repeated).isZero();
        }
    }
}
