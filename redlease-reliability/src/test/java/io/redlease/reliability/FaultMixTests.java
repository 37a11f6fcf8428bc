package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A seeded random mix of every fault that stays inside the guarantee (one Redis server with {@code
 * appendfsync always}, fence keys never lost), one after another against four candidates, each
 * behind its own proxy: partitions, slow links, connection resets, a slow or fast clock with a
 * partition, a parked writer, Redis paused, sleeping, stopped or crashed and restarted, the lease
 * expired or deleted, the counter deleted, scripts flushed, resignations. After every heal a leader
 * must be in place within TTL + acquire interval and stay; at the end the checker must find no
 * violation and no lost write.
 *
 * <p>The short tier runs for {@value #SHORT_SECONDS} s; the soak tier ({@code -Psoak}) for {@code
 * -Dredlease.soak.minutes} (default 10). The seed is printed; {@code -Dredlease.seed=<seed>}
 * repeats the same sequence of faults (the timing of a run on a loaded machine is not repeatable).
 */
@ExtendWith(RedisExtension.class)
class FaultMixTests {

    static final int SHORT_SECONDS = 20;

    enum Fault {
        PARTITION,
        SLOW_LINK,
        CONNECTIONS_RESET,
        SLOW_CLOCK_AND_PARTITION,
        FAST_CLOCK,
        PARKED_WRITER,
        RESIGN,
        CLIENT_PAUSE,
        DEBUG_SLEEP,
        REDIS_SIGSTOP,
        REDIS_CRASH_RESTART,
        LEASE_EXPIRED,
        LEASE_DELETED,
        COUNTER_DELETED,
        SCRIPT_FLUSH
    }

    /** A clock whose rate can change while it runs, without jumping. */
    static final class SkewableClock implements LongSupplier {

        private long baseReal = System.nanoTime();

        private long baseSkewed = baseReal;

        private double rate = 1;

        @Override
        public synchronized long getAsLong() {
            return baseSkewed + (long) ((System.nanoTime() - baseReal) * rate);
        }

        synchronized void rate(double newRate) {
            long now = System.nanoTime();
            baseSkewed += (long) ((now - baseReal) * rate);
            baseReal = now;
            rate = newRate;
        }
    }

    /** Parks the next write of its candidate while armed. */
    static final class Parking implements Workload.Gate {

        private volatile @Nullable CountDownLatch release;

        private volatile @Nullable CountDownLatch parked;

        void arm() {
            parked = new CountDownLatch(1);
            release = new CountDownLatch(1);
        }

        @Override
        public boolean beforeWrite(String candidate, long token, long seq) {
            CountDownLatch gate = release;
            CountDownLatch signal = parked;
            if (gate == null || signal == null || signal.getCount() == 0) {
                return false;
            }
            signal.countDown();
            NetworkFaultTests.awaitUninterruptibly(gate);
            return true;
        }

        boolean isParked() {
            CountDownLatch signal = parked;
            return signal != null && signal.getCount() == 0;
        }

        void release() {
            CountDownLatch gate = release;
            if (gate != null) {
                gate.countDown();
            }
            release = null;
        }
    }

    @Test
    void aSeededMixOfFaultsAppliesNoStaleWriteLosesNoWriteAndALeaderIsAlwaysBack(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        Random random = Seeds.random(info);
        Duration budget =
                Seeds.soak()
                        ? Duration.ofMinutes(Long.getLong("redlease.soak.minutes", 10))
                        : Duration.ofSeconds(SHORT_SECONDS);
        List<String> applied = new ArrayList<>();
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            int n = 4;
            List<SkewableClock> clocks = new ArrayList<>();
            List<Parking> gates = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                SkewableClock clock = new SkewableClock();
                Parking gate = new Parking();
                clocks.add(clock);
                gates.add(gate);
                Workload workload = Workload.steady(Duration.ofMillis(2)).gate(gate);
                // One candidate ends its terms by itself now and then: more hand-overs.
                harness.candidate(
                        "c" + i,
                        i == n - 1 ? workload.writesPerTerm(200) : workload,
                        config -> config.clock(clock));
            }
            harness.awaitWritingLeader(3);
            Fault[] faults = Fault.values();
            long end = System.nanoTime() + budget.toNanos();
            int rounds = 0;
            while (System.nanoTime() - end < 0) {
                Fault fault = faults[random.nextInt(faults.length)];
                // Faults aimed at the leader are the interesting ones; now and then a follower.
                int victimIndex = leaderIndex(harness, random);
                Candidate victim = harness.candidates().get(victimIndex);
                Duration hold = Duration.ofMillis(100 + random.nextInt(1100));
                applied.add(fault + "(" + victim.id + ", " + hold.toMillis() + " ms)");
                long start = System.nanoTime();
                inject(
                        fault,
                        hold,
                        random,
                        harness,
                        server,
                        victim,
                        clocks.get(victimIndex),
                        gates.get(victimIndex));
                long healed = System.nanoTime();
                harness.fault("mix: " + fault, start, healed);
                harness.assertStableLeaderWithin("mix", healed, Duration.ofMillis(300));
                rounds++;
            }
            Figures.count("rounds: fault mix", rounds);
            System.out.println("[redlease-reliability] fault mix: " + rounds + " " + applied);
            Checker.Report report = harness.check();
            Harness.assertSafe(report);
            assertThat(report.applied()).isPositive();
        } catch (AssertionError | RuntimeException ex) {
            throw new AssertionError(
                    "fault mix failed after " + applied + " (the seed is printed above)", ex);
        }
    }

    /** Picks the current leader three times in four, else any candidate. */
    private static int leaderIndex(Harness harness, Random random) {
        List<Candidate> candidates = harness.candidates();
        if (random.nextInt(4) > 0) {
            for (int i = 0; i < candidates.size(); i++) {
                if (candidates.get(i).isLeader()) {
                    return i;
                }
            }
        }
        return random.nextInt(candidates.size());
    }

    /** Injects one fault and heals it; returns when it is healed. */
    private static void inject(
            Fault fault,
            Duration hold,
            Random random,
            Harness harness,
            RedisServer server,
            Candidate victim,
            SkewableClock clock,
            Parking gate)
            throws InterruptedException {
        String lease = harness.name + ":leader";
        switch (fault) {
            case PARTITION -> {
                victim.proxy.blackhole();
                window(hold);
                victim.proxy.pass();
            }
            case SLOW_LINK -> {
                victim.proxy.delay(Duration.ofMillis(20 + random.nextInt(380)));
                window(hold);
                victim.proxy.pass();
            }
            case CONNECTIONS_RESET -> {
                // Commands in flight lose their replies (they may or may not have run).
                victim.proxy.cut();
            }
            case SLOW_CLOCK_AND_PARTITION -> {
                clock.rate(0.5);
                victim.proxy.blackhole();
                window(hold);
                victim.proxy.pass();
                clock.rate(1);
            }
            case FAST_CLOCK -> {
                clock.rate(2);
                window(hold);
                clock.rate(1);
            }
            case PARKED_WRITER -> {
                gate.arm();
                harness.await(
                        victim.id + " parks a write or follows",
                        Duration.ofSeconds(2),
                        () -> gate.isParked() || !victim.isLeader());
                // Its term ends while the write is parked; a successor takes over.
                victim.elector.resign();
                window(hold);
                // Also disarms the gate of a follower that never parked.
                gate.release();
            }
            case RESIGN -> victim.elector.resign();
            case CLIENT_PAUSE -> {
                server.clientPause(hold);
                server.command("PING"); // answered once the pause is over
            }
            case DEBUG_SLEEP -> {
                server.debugSleep(hold);
                server.command("PING"); // answered once the sleep is over
            }
            case REDIS_SIGSTOP -> {
                server.pause();
                window(hold);
                server.resume();
            }
            case REDIS_CRASH_RESTART -> {
                server.kill();
                server.restart();
            }
            case LEASE_EXPIRED -> server.command("PEXPIRE", lease, "1");
            case LEASE_DELETED -> server.command("DEL", lease);
            case COUNTER_DELETED -> server.command("DEL", harness.log.counterKey());
            case SCRIPT_FLUSH -> server.scriptFlush();
        }
    }

    /** Keeps a fault in place for a while: opens the fault window, synchronises nothing. */
    private static void window(Duration hold) throws InterruptedException {
        Thread.sleep(hold.toMillis()); // the fault window itself, not a synchronisation
    }
}
