package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;

import io.redlease.reliability.Checker.Kind;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Redis crashes ({@code SIGKILL}) and restarts mid-run. With AOF and {@code appendfsync always} the
 * counter, the mark and every applied write survive: no regression. Without persistence the keys
 * are gone and tokens start again at 1: the documented regression, which the checker detects.
 */
@ExtendWith(RedisExtension.class)
class PersistenceTests {

    @Test
    void crashRestartWithAppendFsyncAlwaysKeepsTokensIncreasing(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = crashAndRestart(server, info)) {
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void crashRestartWithoutPersistenceRegressesTokensAndTheCheckerDetectsIt(
            @Dedicated RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = crashAndRestart(server, info)) {
            // The log died with the data set: only the history is left to judge by.
            Checker.Report report = harness.check(false);
            // Tokens restart at 1: elected again, and written after greater ones (in real time
            // and after their terms were reported); the new log on its own is in order.
            harness.assertCaught(
                    report,
                    "Redis restarted without persistence",
                    harness.faultStart("Redis crash"),
                    Kind.DUPLICATE_TOKEN,
                    Kind.REAL_TIME_ORDER,
                    Kind.STALE_WRITE);
        }
    }

    private static Harness crashAndRestart(RedisServer server, TestInfo info) throws Exception {
        Harness harness = new Harness(info, server.host(), server.port());
        harness.direct = true;
        harness.candidate("a", Workload.steady(Duration.ofMillis(2)).writesPerTerm(10));
        harness.candidate("b", Workload.steady(Duration.ofMillis(2)).writesPerTerm(10));
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(10)))
                .until(() -> harness.history.elections().size() >= 5);
        // No term is active during the crash: a running leader's next fenced write would restamp
        // the mark on the empty server and hide the regression.
        harness.stopAll();
        long start = System.nanoTime();
        server.kill();
        server.restart();
        long healed = System.nanoTime();
        harness.fault(
                "Redis crash (SIGKILL) and restart, "
                        + (server.info("persistence").contains("aof_enabled:1")
                                ? "AOF always"
                                : "no persistence"),
                start,
                healed);
        int before = harness.history.elections().size();
        harness.candidate("c", Workload.steady(Duration.ofMillis(2)).writesPerTerm(10));
        harness.candidate("d", Workload.steady(Duration.ofMillis(2)).writesPerTerm(10));
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(10)))
                .until(() -> harness.history.elections().size() >= before + 5);
        Figures.duration(
                "leader back after Redis crash-restart",
                harness.history.elections().get(before).at() - healed);
        return harness;
    }
}
