package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.StepDownReason;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.reliability.History.Outcome;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The checker over a partitioned election: 4 instances (each behind its own proxy) share 8
 * partitions with short leases (TTL 500 ms) and write through each partition's fence as fast as
 * they can, while a seeded random sequence of faults runs: an instance partitioned past the TTL, an
 * instance's writer paused with a token while the instance is partitioned (its write arrives after
 * others took the partition over), Redis paused ({@code CLIENT PAUSE}, {@code SIGSTOP}), Redis
 * crashed and restarted ({@code appendfsync always}), and an instance leaving gracefully and a new
 * one joining. After every heal each partition must be held again; at the end the checker runs over
 * every partition's history and log and must find no violation and no lost write.
 *
 * <p>The short tier runs for {@value #SHORT_SECONDS} s; the soak tier ({@code -Psoak}) for {@code
 * -Dredlease.soak.minutes} (default 10).
 */
@ExtendWith(RedisExtension.class)
class PartitionedElectionsUnderFaultsTests {

    static final int SHORT_SECONDS = 8;

    private static final int PARTITIONS = 8;

    private static final Duration TTL = Duration.ofMillis(500);

    private static final Duration HOLD = Duration.ofMillis(700);

    enum Fault {
        PARTITION,
        PAUSED_WRITER,
        CLIENT_PAUSE,
        REDIS_SIGSTOP,
        REDIS_CRASH_RESTART,
        LEAVE_AND_JOIN
    }

    @Test
    void partitionsStaySafeAndOwnedThroughPausesPartitionsAndRestarts(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server, TestInfo info)
            throws Exception {
        Random random = Seeds.random(info);
        Duration budget =
                Seeds.soak()
                        ? Duration.ofMinutes(Long.getLong("redlease.soak.minutes", 10))
                        : Duration.ofSeconds(SHORT_SECONDS);
        String name = "rel-partitions-" + System.nanoTime();
        History[] histories = new History[PARTITIONS];
        FencedLog[] logs = new FencedLog[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            histories[p] = new History();
            logs[p] = new FencedLog(PartitionedElection.electionName(name, p));
        }
        List<Member> members = new ArrayList<>();
        try (Connections connections = new Connections()) {
            for (int i = 0; i < 4; i++) {
                members.add(new Member("m" + i, name, server, connections, histories, logs));
            }
            await("every partition held before the first fault")
                    .atMost(TTL.multipliedBy(4).plus(Harness.SLACK).plusSeconds(2))
                    .until(() -> allHeld(members));
            int faults = 0;
            long end = System.nanoTime() + budget.toNanos();
            while (System.nanoTime() - end < 0) {
                Fault fault = Fault.values()[random.nextInt(Fault.values().length)];
                List<Member> live =
                        members.stream()
                                .filter(m -> m.running)
                                .filter(
                                        m ->
                                                fault != Fault.PAUSED_WRITER
                                                        || !m.election.owned().isEmpty())
                                .toList();
                if (live.isEmpty()) {
                    // A paused writer needs a member that holds a partition; pick another fault.
                    continue;
                }
                Member victim = live.get(random.nextInt(live.size()));
                long start = System.nanoTime();
                switch (fault) {
                    case PARTITION -> {
                        victim.proxy.blackhole();
                        window(HOLD);
                        victim.proxy.pass();
                    }
                    case PAUSED_WRITER -> {
                        CountDownLatch parked = victim.park();
                        await().atMost(Duration.ofSeconds(5)).until(() -> parked.getCount() == 0);
                        victim.proxy.blackhole();
                        window(HOLD);
                        victim.proxy.pass();
                        victim.unpark();
                    }
                    case CLIENT_PAUSE -> {
                        server.clientPause(HOLD);
                        server.command("PING"); // answered once the pause is over
                    }
                    case REDIS_SIGSTOP -> {
                        server.pause();
                        window(HOLD);
                        server.resume();
                    }
                    case REDIS_CRASH_RESTART -> {
                        server.kill();
                        server.restart();
                    }
                    case LEAVE_AND_JOIN -> {
                        victim.close();
                        members.add(
                                new Member(
                                        "m" + members.size(),
                                        name,
                                        server,
                                        connections,
                                        histories,
                                        logs));
                    }
                }
                faults++;
                for (History history : histories) {
                    history.fault(fault.name(), start, System.nanoTime());
                }
                Figures.count("partitioned elections: faults injected: " + fault, 1);
                await("every partition held after " + fault)
                        .atMost(TTL.multipliedBy(4).plus(Harness.SLACK).plusSeconds(2))
                        .until(() -> allHeld(members));
            }
            members.forEach(Member::close);
            long elections = 0;
            for (int p = 0; p < PARTITIONS; p++) {
                Checker.Report report =
                        Checker.check(
                                histories[p],
                                logs[p].read(connections.standalone(server.host(), server.port())),
                                true);
                Harness.assertSafe(withoutReplayedWrites(report, histories[p]));
                assertThat(report.applied()).as("writes applied in partition %d", p).isPositive();
                elections += histories[p].elections().size();
            }
            Figures.count("partitioned elections: terms", elections);
            assertThat(faults).isPositive();
            assertThat(elections).isGreaterThan(PARTITIONS);
        } finally {
            members.forEach(Member::close);
        }
    }

    /**
     * The report without the phantom writes of calls in flight across a Redis crash: Lettuce sends
     * such a call again once it has reconnected, so a write that was applied (and persisted) just
     * before the crash runs a second time, and is refused if a newer term came meanwhile; the
     * caller sees the second outcome. Its true outcome is unknown to the caller, as for any call
     * cut by a crash.
     */
    private static Checker.Report withoutReplayedWrites(Checker.Report report, History history) {
        List<History.Fault> crashes =
                history.faults().stream()
                        .filter(f -> f.what().equals(Fault.REDIS_CRASH_RESTART.name()))
                        .toList();
        List<Checker.Violation> kept =
                report.violations().stream()
                        .filter(
                                v ->
                                        !(v.kind() == Checker.Kind.PHANTOM_WRITE
                                                && cutByACrash(v, history, crashes)))
                        .toList();
        Figures.count(
                "partitioned elections: writes replayed across a crash",
                report.violations().size() - kept.size());
        return new Checker.Report(
                kept,
                report.logEntries(),
                report.applied(),
                report.rejected(),
                report.errors(),
                report.elections());
    }

    /** Whether the write a violation names was in flight while Redis crashed and restarted. */
    private static boolean cutByACrash(
            Checker.Violation violation, History history, List<History.Fault> crashes) {
        return history.writes().stream()
                .filter(w -> w.end() == violation.at())
                .anyMatch(
                        w ->
                                crashes.stream()
                                        .anyMatch(
                                                c ->
                                                        w.start() <= c.healed()
                                                                && w.end() >= c.start()));
    }

    private static boolean allHeld(List<Member> members) {
        int[] holders = new int[PARTITIONS];
        for (Member member : members) {
            if (member.running) {
                member.election.owned().forEach(p -> holders[p]++);
            }
        }
        for (int count : holders) {
            if (count != 1) {
                return false;
            }
        }
        return true;
    }

    private static void window(Duration hold) throws InterruptedException {
        // Holds a fault open past the TTL: a fault window, not a synchronisation.
        Thread.sleep(hold.toMillis());
    }

    /** One instance: a partitioned election behind its own proxy and a writer over its terms. */
    private static final class Member implements AutoCloseable {

        final String id;

        final TcpProxy proxy;

        final PartitionedElection election;

        final History[] histories;

        final FencedLog[] logs;

        final Thread writer;

        final AtomicLong sequence = new AtomicLong();

        volatile boolean running = true;

        private volatile @Nullable CountDownLatch parked;

        private volatile @Nullable CountDownLatch release;

        Member(
                String id,
                String name,
                RedisServer server,
                Connections connections,
                History[] histories,
                FencedLog[] logs) {
            this.id = id;
            this.histories = histories;
            this.logs = logs;
            this.proxy = TcpProxy.start(server.host(), server.port());
            PartitionedElectionConfig config =
                    PartitionedElectionConfig.builder(name, PARTITIONS)
                            .instanceId(id)
                            .ttl(TTL)
                            .renewInterval(Duration.ofMillis(100))
                            .acquireInterval(Duration.ofMillis(100))
                            .drainTimeout(Duration.ofSeconds(2))
                            .listener(
                                    new PartitionListener() {
                                        @Override
                                        public void onAssigned(int partition, long token) {
                                            histories[partition].elected(
                                                    id, token, System.nanoTime());
                                        }

                                        @Override
                                        public void onRevoked(
                                                int partition, long token, StepDownReason reason) {
                                            histories[partition].steppedDown(
                                                    id, reason.name(), System.nanoTime());
                                        }
                                    })
                            .build();
            this.election =
                    new PartitionedElection(
                            connections.standalone(proxy.host(), proxy.port()), config);
            election.start();
            this.writer = new Thread(this::write, "writer-" + id);
            writer.setDaemon(true);
            writer.start();
        }

        /** Arms a pause of the next write: returns a latch counted down once it is parked. */
        CountDownLatch park() {
            release = new CountDownLatch(1);
            CountDownLatch signal = new CountDownLatch(1);
            parked = signal;
            return signal;
        }

        void unpark() {
            CountDownLatch gate = release;
            if (gate != null) {
                gate.countDown();
            }
        }

        private void write() {
            while (running) {
                boolean wrote = false;
                for (int p = 0; p < PARTITIONS && running; p++) {
                    OptionalLong token = election.token(p);
                    if (token.isPresent()) {
                        wrote = true;
                        writeOnce(p, token.getAsLong());
                    }
                }
                try {
                    // The workload's pace between sweeps: a fault window, not a synchronisation.
                    Thread.sleep(wrote ? 2 : 5);
                } catch (InterruptedException ex) {
                    return;
                }
            }
        }

        private void writeOnce(int p, long token) {
            long seq = sequence.incrementAndGet();
            CountDownLatch signal = parked;
            CountDownLatch gate = release;
            if (signal != null && gate != null) {
                parked = null;
                signal.countDown();
                NetworkFaultTests.awaitUninterruptibly(gate);
            }
            long start = System.nanoTime();
            Outcome outcome;
            String error = "";
            try {
                outcome =
                        logs[p].fenced(election.fencer(p, token), seq, id)
                                ? Outcome.APPLIED
                                : Outcome.REJECTED;
            } catch (RuntimeException ex) {
                outcome = Outcome.ERROR;
                error = Harness.describe(ex);
            }
            long done = System.nanoTime();
            histories[p].write(new History.Write(id, token, seq, start, done, outcome, error));
            if (outcome == Outcome.REJECTED) {
                histories[p].termEnded(id, token, done);
            }
        }

        @Override
        public void close() {
            if (!running) {
                return;
            }
            running = false;
            unpark();
            try {
                writer.join(10_000);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            election.close();
            proxy.close();
        }
    }
}
