package io.redlease.benchmarks.cost;

import io.redlease.benchmarks.contenders.ContenderMain;
import io.redlease.benchmarks.contenders.Contestant;
import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.ChildJvm;
import io.redlease.benchmarks.support.Event;
import io.redlease.benchmarks.support.EventBoard;
import io.redlease.benchmarks.support.Machine;
import io.redlease.test.RedisServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What elections cost while nothing happens: Redis commands per second per leader and per idle
 * follower, Redis connections per process, and JVM threads and heap per process, for 1, 100 and
 * 1,000 elections per process.
 *
 * <p>Each case runs two child JVMs of one contestant. Process A joins N elections and wins them
 * all; after a settling pause the {@code INFO commandstats} delta over a window gives the leaders'
 * rate. Then process B joins the same N elections and follows in all of them; the delta over a
 * second window, minus the leaders' rate, gives the followers'. Connections are the change of
 * {@code connected_clients} when each process came up; threads and heap are read inside each
 * process after a full GC (heap "baseline" after the client is connected, before any election).
 *
 * <p>Requests are commands the clients sent (EVALSHA/EVAL, PING, Pub/Sub); "incl. in scripts" adds
 * the commands those scripts ran inside Redis (Redis counts both). The harness's own INFO calls are
 * left out.
 *
 * <p>Usage: {@code CostBenchmark [--window 30] [--settle 3] [--out benchmarks/target/cost] [--cases
 * redlease:1,redlease:100,redlease:1000,redlease-go:1,si:1,redisson:1,redisson-5s:1]}.
 */
public final class CostBenchmark {

    /** Commands the contestants run only inside Lua scripts (checked against their sources). */
    private static final Set<String> INSIDE_SCRIPTS =
            Set.of(
                    "get", "set", "del", "unlink", "pexpire", "pttl", "incr", "publish", "hset",
                    "hget", "hexists", "hincrby", "hdel", "exists", "hlen", "expire", "ttl");

    /** The harness's own commands. */
    private static final Set<String> HARNESS = Set.of("info");

    private static final List<String> CHILD_JVM_ARGS =
            List.of(
                    "-Xmx512m",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    "-Dorg.slf4j.simpleLogger.showDateTime=true");

    private static final Duration TIMEOUT = Duration.ofSeconds(180);

    private final RedisServer redis;

    private final EventBoard board = new EventBoard();

    private final Duration window;

    private final Duration settle;

    private final Path out;

    private CostBenchmark(RedisServer redis, Duration window, Duration settle, Path out) {
        this.redis = redis;
        this.window = window;
        this.settle = settle;
        this.out = out;
    }

    record Case(Contestant contestant, int elections) {}

    record Rates(double requests, double all, Map<String, Double> byCommand) {}

    record Measured(
            Case c,
            Rates leader,
            Rates follower,
            long leaderConnections,
            long followerConnections,
            Map<String, String> leaderBaseline,
            Map<String, String> leaderStats,
            Map<String, String> followerBaseline,
            Map<String, String> followerStats) {}

    public static void main(String[] args) throws Exception {
        Duration window = Duration.ofSeconds(30);
        Duration settle = Duration.ofSeconds(3);
        Path out = Path.of("benchmarks/target/cost");
        List<Case> cases = new ArrayList<>();
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--window" -> window = Duration.ofSeconds(Long.parseLong(args[i + 1]));
                case "--settle" -> settle = Duration.ofSeconds(Long.parseLong(args[i + 1]));
                case "--out" -> out = Path.of(args[i + 1]);
                case "--cases" -> {
                    for (String spec : args[i + 1].split(",")) {
                        String[] parts = spec.split(":");
                        cases.add(new Case(Contestant.of(parts[0]), Integer.parseInt(parts[1])));
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (cases.isEmpty()) {
            cases =
                    List.of(
                            new Case(Contestant.REDLEASE, 1),
                            new Case(Contestant.REDLEASE, 100),
                            new Case(Contestant.REDLEASE, 1000),
                            new Case(Contestant.REDLEASE_GO, 1),
                            new Case(Contestant.SPRING_INTEGRATION, 1),
                            new Case(Contestant.REDISSON, 1),
                            new Case(Contestant.REDISSON_5S, 1));
        }
        Files.createDirectories(out);
        Instant started = Instant.now();
        try (RedisServer redis = BenchRedis.start()) {
            CostBenchmark benchmark = new CostBenchmark(redis, window, settle, out);
            Map<String, String> machine = Machine.describe(redis);
            List<Measured> results = new ArrayList<>();
            for (Case c : cases) {
                results.add(benchmark.measure(c));
            }
            benchmark.write(machine, results, Duration.between(started, Instant.now()));
        }
        System.exit(0);
    }

    private Measured measure(Case c) throws Exception {
        String prefix = "cost-" + c.contestant().id() + "-" + c.elections();
        System.out.printf("%s: %d election(s) per process%n", c.contestant().id(), c.elections());
        long clients0 = clients();
        ChildJvm a = child(prefix + "-leader", c.contestant());
        ChildJvm b = null;
        try {
            board.await(a, "READY", "-", TIMEOUT);
            Map<String, String> aBaseline = stats(a, "a-baseline");
            a.send("join-many " + prefix + " " + c.elections());
            board.await(a, "ALL_ELECTED", prefix, TIMEOUT);
            Thread.sleep(settle.toMillis());
            long clientsA = clients() - clients0;
            Map<String, Long> s0 = commandCalls();
            Thread.sleep(window.toMillis());
            Map<String, Long> s1 = commandCalls();
            Rates leaders = rates(s0, s1, 1.0 / c.elections());
            Map<String, String> aStats = stats(a, "a-leading");
            System.out.printf(
                    "  leaders: %.3f requests/s per election, %d connection(s)%n",
                    leaders.requests(), clientsA);

            b = child(prefix + "-follower", c.contestant());
            board.await(b, "READY", "-", TIMEOUT);
            Map<String, String> bBaseline = stats(b, "b-baseline");
            b.send("join-many " + prefix + " " + c.elections());
            board.await(b, "ALL_FOLLOWING", prefix, TIMEOUT);
            Thread.sleep(settle.toMillis());
            long clientsB = clients() - clients0 - clientsA;
            Map<String, Long> s2 = commandCalls();
            Thread.sleep(window.toMillis());
            Map<String, Long> s3 = commandCalls();
            Rates both = rates(s2, s3, 1.0 / c.elections());
            Rates followers = minus(both, leaders);
            Map<String, String> bStats = stats(b, "b-following");
            System.out.printf(
                    "  followers: %.3f requests/s per election, %d connection(s)%n",
                    followers.requests(), clientsB);
            return new Measured(
                    c, leaders, followers, clientsA, clientsB, aBaseline, aStats, bBaseline,
                    bStats);
        } finally {
            a.close();
            if (b != null) {
                b.close();
            }
        }
    }

    private ChildJvm child(String label, Contestant contestant) {
        return ChildJvm.start(
                label,
                CHILD_JVM_ARGS,
                ContenderMain.class,
                List.of(contestant.id(), Integer.toString(redis.port())),
                board,
                out.resolve("logs"));
    }

    private Map<String, String> stats(ChildJvm child, String label) throws Exception {
        child.send("stats " + label);
        Event event = board.await(child, "STATS", label, TIMEOUT);
        Map<String, String> stats = new HashMap<>();
        for (String pair : event.detail().split(" ")) {
            String[] kv = pair.split("=", 2);
            stats.put(kv[0], kv[1]);
        }
        return stats;
    }

    private long clients() {
        return Long.parseLong(BenchRedis.parseInfo(redis.info("clients")).get("connected_clients"));
    }

    private Map<String, Long> commandCalls() {
        return BenchRedis.commandCalls(redis.info("commandstats"));
    }

    private Rates rates(Map<String, Long> before, Map<String, Long> after, double scale) {
        double seconds = window.toNanos() / 1e9;
        Map<String, Double> byCommand = new TreeMap<>();
        double requests = 0;
        double all = 0;
        for (Map.Entry<String, Long> entry : after.entrySet()) {
            String command = entry.getKey();
            if (HARNESS.contains(command)) {
                continue;
            }
            long delta = entry.getValue() - before.getOrDefault(command, 0L);
            if (delta == 0) {
                continue;
            }
            double rate = delta / seconds * scale;
            byCommand.put(command, rate);
            all += rate;
            if (!INSIDE_SCRIPTS.contains(command)) {
                requests += rate;
            }
        }
        return new Rates(requests, all, byCommand);
    }

    private static Rates minus(Rates both, Rates leaders) {
        Map<String, Double> byCommand = new TreeMap<>();
        both.byCommand()
                .forEach((k, v) -> byCommand.put(k, v - leaders.byCommand().getOrDefault(k, 0.0)));
        leaders.byCommand().forEach((k, v) -> byCommand.putIfAbsent(k, -v));
        byCommand.values().removeIf(v -> Math.abs(v) < 1e-9);
        return new Rates(
                both.requests() - leaders.requests(), both.all() - leaders.all(), byCommand);
    }

    // Results.

    private void write(Map<String, String> machine, List<Measured> results, Duration took)
            throws Exception {
        StringBuilder md = new StringBuilder();
        md.append("<!-- written by CostBenchmark on ").append(Instant.now()).append(" -->\n\n");
        md.append("| Machine and versions | |\n|---|---|\n");
        machine.forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        md.append(
                String.format(
                        "| Run | windows of %d s after %d s settling, took %d min %d s, load average at end %s |%n%n",
                        window.toSeconds(),
                        settle.toSeconds(),
                        took.toMinutes(),
                        took.toSecondsPart(),
                        Machine.loadAverage()));

        md.append("#### Redis load per election\n\n");
        md.append(
                "| Contestant | Elections per process | Leader: requests/s | Idle follower: requests/s"
                        + " | incl. in scripts: leader / follower | Commands seen (per election"
                        + " per s, leader; follower) |\n");
        md.append("|---|---|---|---|---|---|\n");
        for (Measured m : results) {
            md.append(
                    String.format(
                            "| %s | %,d | %.3f | %.3f | %.2f / %.2f | %s; %s |%n",
                            m.c().contestant().label(),
                            m.c().elections(),
                            m.leader().requests(),
                            m.follower().requests(),
                            m.leader().all(),
                            m.follower().all(),
                            commands(m.leader()),
                            commands(m.follower())));
        }

        md.append("\n#### Connections, threads and heap per process\n\n");
        md.append(
                "| Contestant | Elections | Process | Redis connections | Threads (total) |"
                        + " redlease threads (loops) | Peak threads | Heap after GC: baseline →"
                        + " with elections | Heap per election |\n");
        md.append("|---|---|---|---|---|---|---|---|---|\n");
        for (Measured m : results) {
            row(md, m, "leader", m.leaderConnections(), m.leaderBaseline(), m.leaderStats());
            row(
                    md,
                    m,
                    "follower",
                    m.followerConnections(),
                    m.followerBaseline(),
                    m.followerStats());
        }
        Files.writeString(out.resolve("summary.md"), md, StandardCharsets.UTF_8);
        System.out.println();
        System.out.println(md);
        System.out.println("wrote " + out.resolve("summary.md"));
    }

    private static void row(
            StringBuilder md,
            Measured m,
            String role,
            long connections,
            Map<String, String> baseline,
            Map<String, String> stats) {
        long before = Long.parseLong(baseline.get("heapUsedBytes"));
        long after = Long.parseLong(stats.get("heapUsedBytes"));
        md.append(
                String.format(
                        "| %s | %,d | %s | %d | %s | %s (%s) | %s | %s → %s | %s |%n",
                        m.c().contestant().label(),
                        m.c().elections(),
                        role,
                        connections,
                        stats.get("threads"),
                        stats.get("redleaseThreads"),
                        stats.get("redleaseLoopThreads"),
                        stats.get("peakThreads"),
                        mb(before),
                        mb(after),
                        kb((after - before) / (double) m.c().elections())));
    }

    private static String commands(Rates rates) {
        if (rates.byCommand().isEmpty()) {
            return "none";
        }
        return rates.byCommand().entrySet().stream()
                .map(e -> e.getKey() + " " + String.format("%.2f", e.getValue()))
                .collect(Collectors.joining(", "));
    }

    private static String mb(long bytes) {
        return String.format("%.1f MB", bytes / 1e6);
    }

    private static String kb(double bytes) {
        return String.format("%.1f kB", bytes / 1e3);
    }
}
