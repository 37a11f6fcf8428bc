package io.redlease.benchmarks.failover;

import io.redlease.benchmarks.contenders.ContenderMain;
import io.redlease.benchmarks.contenders.Contestant;
import io.redlease.benchmarks.failover.Trial.Scenario;
import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.ChildJvm;
import io.redlease.benchmarks.support.Event;
import io.redlease.benchmarks.support.EventBoard;
import io.redlease.benchmarks.support.Machine;
import io.redlease.benchmarks.support.Summary;
import io.redlease.test.RedisServer;
import io.redlease.test.RespClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The failover harness: graceful hand-off and crash failover of every contestant, measured across
 * child JVMs against one private {@code redis-server}.
 *
 * <p>Graceful: two long-lived JVMs per contestant take turns. For each trial a fresh election is
 * joined by one (which wins) and then the other (which follows); after a random delay spanning the
 * follower's poll period the leader is told to stop. Latency is from the leader's {@code
 * STEPPING_DOWN} (stamped just before the library is asked to step down) to the successor's {@code
 * ELECTED}. Trials run one at a time, contestants interleaved round-robin.
 *
 * <p>Crash: for each trial a fresh leader JVM wins a fresh election, a long-lived follower JVM of
 * the same contestant joins after a random gap (up to one poll period, so its polls and the
 * leader's renewals fall at random phases), and after another random delay (0.1–2.1 s) the leader
 * JVM gets {@code SIGKILL}. Latency is from the kill to the follower's {@code ELECTED}; the lease's
 * remaining PTTL is read right after the kill. Crash trials of all contestants run interleaved,
 * several at a time (they spend almost all their time waiting for a lease to lapse).
 *
 * <p>Usage: {@code FailoverBenchmark [--trials 30] [--warmup 3] [--scenarios graceful,crash]
 * [--contestants redlease,redlease-go,si,si-5s,redisson,redisson-5s] [--parallel 10] [--out
 * benchmarks/target/failover] [--chart docs/benchmarks-failover.svg] [--seed 1] [--hand-off-span
 * MILLIS] [--trace-redis false] [--trace-jit false]}; the span replaces each contestant's poll
 * period as the random part of the wait before a graceful stop. {@code --trace-redis true} watches
 * Redis with {@code MONITOR} and splits each graceful hand-off where Redis ran the release and the
 * winning acquire ({@link RedisTrace}); {@code --trace-jit true} logs the JIT compiler of each
 * graceful child JVM and splits the hand-offs by whether it compiled as they began ({@link
 * JitTrace}).
 */
public final class FailoverBenchmark {

    private static final List<String> CHILD_JVM_ARGS =
            List.of(
                    "-Xmx256m",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    "-Dorg.slf4j.simpleLogger.showDateTime=true");

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private static final Duration CRASH_DELAY_SPAN = Duration.ofSeconds(2);

    private final Options options;

    private final RedisServer redis;

    private final EventBoard board = new EventBoard();

    private final List<Trial> trials = Collections.synchronizedList(new ArrayList<>());

    /** Graceful hand-offs split in Redis's clock, per contestant, with {@code --trace-redis}. */
    private final Map<Contestant, List<RedisTrace.Split>> splits = new ConcurrentHashMap<>();

    private @Nullable RedisTrace redisTrace;

    private @Nullable JitTrace jitTrace;

    private FailoverBenchmark(Options options, RedisServer redis) {
        this.options = options;
        this.redis = redis;
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        Instant started = Instant.now();
        try (RedisServer redis = BenchRedis.start()) {
            new FailoverBenchmark(options, redis).run(started);
        }
        System.exit(0);
    }

    private void run(Instant started) throws Exception {
        Files.createDirectories(options.out);
        Map<String, String> machine = Machine.describe(redis);
        Summary rtt = roundTrip(redis.port());
        log("round trip (Lettuce PING, loopback): p50 %s, p99 %s", rtt.p50(), rtt.p99());
        if (options.scenarios.contains(Scenario.GRACEFUL)) {
            if (options.traceRedis) {
                redisTrace = RedisTrace.start(BenchRedis.HOST, redis.port());
            }
            if (options.traceJit) {
                jitTrace = new JitTrace(options.out.resolve("logs").toAbsolutePath());
            }
            try {
                runGraceful();
            } finally {
                if (redisTrace != null) {
                    redisTrace.close();
                }
            }
        }
        if (options.scenarios.contains(Scenario.CRASH)) {
            runCrash();
        }
        Duration took = Duration.between(started, Instant.now());
        writeResults(machine, rtt, took);
    }

    // Graceful hand-off.

    private void runGraceful() throws Exception {
        Map<Contestant, ChildJvm[]> pairs = new EnumMap<>(Contestant.class);
        try {
            for (Contestant contestant : options.contestants) {
                ChildJvm[] pair = {gracefulChild(contestant, "a"), gracefulChild(contestant, "b")};
                pairs.put(contestant, pair);
            }
            for (ChildJvm[] pair : pairs.values()) {
                for (ChildJvm child : pair) {
                    board.await(child, "READY", "-", START_TIMEOUT);
                }
            }
            for (int i = -options.warmup; i < options.trials; i++) {
                for (Contestant contestant : options.contestants) {
                    ChildJvm[] pair = pairs.get(contestant);
                    ChildJvm leader = pair[Math.floorMod(i, 2)];
                    ChildJvm follower = pair[Math.floorMod(i + 1, 2)];
                    Trial trial = graceful(contestant, i, leader, follower);
                    if (i >= 0) {
                        trials.add(trial);
                    }
                    log(
                            "graceful %-12s %s%-3d %s",
                            contestant.id(),
                            i < 0 ? "warm-up " : "#",
                            Math.abs(i),
                            trial.ok() ? Summary.millis(trial.latencyMs()) : trial.note());
                }
            }
        } finally {
            pairs.values().stream().flatMap(Arrays::stream).forEach(ChildJvm::close);
        }
    }

    private Trial graceful(Contestant contestant, int index, ChildJvm leader, ChildJvm follower)
            throws InterruptedException {
        String name = "g-" + contestant.id() + (index < 0 ? "-w" + -index : "-" + index);
        Duration timeout = contestant.ttl().multipliedBy(2).plusSeconds(10);
        try {
            leader.send("join " + name);
            board.await(leader, "ELECTED", name, timeout);
            follower.send("join " + name);
            board.await(follower, "FOLLOWING", name, timeout);
            Duration span =
                    options.handOffSpan != null ? options.handOffSpan : contestant.pollPeriod();
            Thread.sleep(randomDelay(span, index, contestant).toMillis());
            leader.send("stop " + name);
            Event stepping = board.await(leader, "STEPPING_DOWN", name, timeout);
            Event elected = board.await(follower, "ELECTED", name, timeout);
            Event stopped = board.await(leader, "STOPPED", name, timeout);
            RedisTrace trace = redisTrace;
            if (trace != null && index >= 0) {
                RedisTrace.Split split = trace.split(name, stepping.nanos(), elected.nanos());
                if (split != null) {
                    splits.computeIfAbsent(
                                    contestant,
                                    c -> Collections.synchronizedList(new ArrayList<>()))
                            .add(split);
                }
            }
            return new Trial(
                    Scenario.GRACEFUL,
                    contestant,
                    index,
                    millis(elected.nanos() - stepping.nanos()),
                    millis(stopped.nanos() - stepping.nanos()),
                    stepping.nanos(),
                    "");
        } catch (TimeoutException ex) {
            return failed(Scenario.GRACEFUL, contestant, index, ex);
        } finally {
            follower.send("stop " + name);
            leader.send("stop " + name);
            try {
                board.await(follower, "STOPPED", name, timeout);
            } catch (TimeoutException ex) {
                log("cleanup of %s: %s", name, ex.getMessage());
            }
            board.forget(name);
        }
    }

    // Crash.

    private void runCrash() throws Exception {
        Map<Contestant, ChildJvm> followers = new ConcurrentHashMap<>();
        ExecutorService workers = Executors.newFixedThreadPool(options.parallel);
        Semaphore launches = new Semaphore(2);
        try {
            for (Contestant contestant : options.contestants) {
                followers.put(
                        contestant, child("crash-" + contestant.id() + "-follower", contestant));
            }
            for (ChildJvm follower : followers.values()) {
                board.await(follower, "READY", "-", START_TIMEOUT);
            }
            List<Future<Trial>> pending = new ArrayList<>();
            for (int i = 0; i < options.trials; i++) {
                for (Contestant contestant : options.contestants) {
                    int index = i;
                    pending.add(
                            workers.submit(
                                    () ->
                                            crash(
                                                    contestant,
                                                    index,
                                                    followers.get(contestant),
                                                    launches)));
                }
            }
            for (Future<Trial> future : pending) {
                Trial trial = future.get();
                trials.add(trial);
            }
        } finally {
            workers.shutdownNow();
            followers.values().forEach(ChildJvm::close);
        }
    }

    private Trial crash(Contestant contestant, int index, ChildJvm follower, Semaphore launches)
            throws InterruptedException {
        String name = "c-" + contestant.id() + "-" + index;
        Duration timeout = contestant.ttl().plusSeconds(30);
        ChildJvm leader;
        launches.acquire();
        try {
            leader = child("crash-" + contestant.id() + "-" + index, contestant);
            board.await(leader, "READY", "-", START_TIMEOUT);
        } catch (TimeoutException ex) {
            return failed(Scenario.CRASH, contestant, index, ex);
        } finally {
            launches.release();
        }
        try (RespClient client = redis.client()) {
            leader.send("join " + name);
            board.await(leader, "ELECTED", name, timeout);
            // A random gap decorrelates the follower's polls from the leader's renewals.
            Thread.sleep(randomDelay(contestant.pollPeriod(), index + 1000, contestant).toMillis());
            follower.send("join " + name);
            board.await(follower, "FOLLOWING", name, timeout);
            Thread.sleep(randomDelay(CRASH_DELAY_SPAN, index, contestant).toMillis());
            long killedAt = System.nanoTime();
            leader.kill();
            Object pttl = client.command("PTTL", contestant.leaseKey(name));
            long readAt = System.nanoTime();
            double leaseLeft =
                    pttl instanceof Long left && left >= 0
                            ? left + millis(readAt - killedAt)
                            : Double.NaN;
            Event elected = board.await(follower, "ELECTED", name, timeout);
            Trial trial =
                    new Trial(
                            Scenario.CRASH,
                            contestant,
                            index,
                            millis(elected.nanos() - killedAt),
                            leaseLeft,
                            killedAt,
                            "");
            log(
                    "crash    %-12s #%-3d %s (lease had %s left)",
                    contestant.id(),
                    index,
                    Summary.millis(trial.latencyMs()),
                    Summary.millis(leaseLeft));
            return trial;
        } catch (TimeoutException | RuntimeException ex) {
            log("crash    %-12s #%-3d failed: %s", contestant.id(), index, ex.getMessage());
            return failed(Scenario.CRASH, contestant, index, ex);
        } finally {
            leader.kill();
            follower.send("stop " + name);
            try {
                board.await(follower, "STOPPED", name, timeout);
            } catch (TimeoutException ex) {
                log("cleanup of %s: %s", name, ex.getMessage());
            }
            board.forget(name);
        }
    }

    // Helpers.

    private ChildJvm gracefulChild(Contestant contestant, String suffix) {
        String label = "graceful-" + contestant.id() + "-" + suffix;
        JitTrace trace = jitTrace;
        return child(
                label, contestant, trace != null ? trace.jvmArgs(contestant, label) : List.of());
    }

    private ChildJvm child(String label, Contestant contestant) {
        return child(label, contestant, List.of());
    }

    private ChildJvm child(String label, Contestant contestant, List<String> extraJvmArgs) {
        List<String> jvmArgs = new ArrayList<>(CHILD_JVM_ARGS);
        jvmArgs.addAll(extraJvmArgs);
        return ChildJvm.start(
                label,
                jvmArgs,
                ContenderMain.class,
                List.of(contestant.id(), Integer.toString(redis.port())),
                board,
                options.out.resolve("logs"));
    }

    /**
     * Returns 100 ms plus a uniformly random part of the span, reproducible from the seed, trial
     * and contestant. (SplittableRandom mixes its seed, so neighbouring trials get unrelated
     * delays; java.util.Random's first values for neighbouring seeds are nearly equal.)
     */
    private Duration randomDelay(Duration span, int index, Contestant contestant) {
        SplittableRandom random =
                new SplittableRandom(
                        options.seed * 0x9E3779B97F4A7C15L
                                + index * 1_000_003L
                                + contestant.ordinal() * 7_919L);
        return Duration.ofMillis(100 + (long) (random.nextDouble() * span.toMillis()));
    }

    private static Trial failed(Scenario scenario, Contestant contestant, int index, Exception ex) {
        return new Trial(
                scenario,
                contestant,
                index,
                Double.NaN,
                Double.NaN,
                0,
                String.valueOf(ex.getMessage()));
    }

    /** PING round trips through Lettuce on one connection, after a warm-up, in milliseconds. */
    static Summary roundTrip(int port) {
        LettuceConnectionFactory factory = BenchRedis.lettuce(port);
        try (RedisConnection connection = factory.getConnection()) {
            for (int i = 0; i < 5_000; i++) {
                connection.ping();
            }
            List<Double> samples = new ArrayList<>();
            for (int i = 0; i < 5_000; i++) {
                long start = System.nanoTime();
                connection.ping();
                samples.add(millis(System.nanoTime() - start));
            }
            return Summary.of(samples);
        } finally {
            factory.destroy();
        }
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    private static void log(String format, Object... args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof Double value) {
                args[i] = Summary.millis(value);
            }
        }
        System.out.printf(format + "%n", args);
    }

    // Results.

    private void writeResults(Map<String, String> machine, Summary rtt, Duration took)
            throws IOException {
        List<Trial> all = new ArrayList<>(trials);
        StringBuilder csv =
                new StringBuilder(
                        "scenario,contestant,trial,latency_ms,lease_left_ms,started_nanos,note\n");
        all.forEach(trial -> csv.append(trial.csv()).append('\n'));
        Files.writeString(options.out.resolve("trials.csv"), csv, StandardCharsets.UTF_8);

        Map<Scenario, Map<Contestant, List<Double>>> values = new LinkedHashMap<>();
        for (Scenario scenario : options.scenarios) {
            Map<Contestant, List<Double>> byContestant = new EnumMap<>(Contestant.class);
            for (Contestant contestant : options.contestants) {
                byContestant.put(
                        contestant,
                        all.stream()
                                .filter(t -> t.scenario() == scenario)
                                .filter(t -> t.contestant() == contestant && t.ok())
                                .map(Trial::latencyMs)
                                .collect(Collectors.toList()));
            }
            values.put(scenario, byContestant);
        }

        StringBuilder md = new StringBuilder();
        md.append("<!-- written by FailoverBenchmark on ").append(Instant.now()).append(" -->\n\n");
        md.append("| Machine and versions | |\n|---|---|\n");
        machine.forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        md.append(
                String.format(
                        "| Redis round trip (Lettuce PING, 5,000 after warm-up) | p50 %s, p99 %s |%n",
                        Summary.millis(rtt.p50()), Summary.millis(rtt.p99())));
        md.append(
                String.format(
                        "| Run | %s trials per figure (graceful after %d warm-up trials), %s,"
                                + " crash trials %d at a time, took %d min %d s, load average at end %s |%n%n",
                        options.trials,
                        options.warmup,
                        options.scenarios.stream()
                                .map(Scenario::id)
                                .collect(Collectors.joining(" + ")),
                        options.parallel,
                        took.toMinutes(),
                        took.toSecondsPart(),
                        Machine.loadAverage()));
        if (values.containsKey(Scenario.GRACEFUL)) {
            md.append("#### ").append(Scenario.GRACEFUL.title()).append("\n\n");
            md.append(
                    "| Contestant | TTL | ok / trials | p50 | p95 | p99 | max | p50 ÷ RTT | p99 ÷"
                            + " RTT | old leader's stop() p50 |\n");
            md.append("|---|---|---|---|---|---|---|---|---|---|\n");
            for (Contestant c : options.contestants) {
                Summary s = Summary.of(values.get(Scenario.GRACEFUL).get(c));
                Summary stop =
                        Summary.of(
                                all.stream()
                                        .filter(t -> t.scenario() == Scenario.GRACEFUL)
                                        .filter(t -> t.contestant() == c && t.ok())
                                        .map(Trial::leaseLeftMs)
                                        .toList());
                md.append(
                        String.format(
                                "| %s | %s | %d / %d | %s | %s | %s | %s | %s | %s | %s |%n",
                                c.label(),
                                Summary.millis(c.ttl().toMillis()),
                                s.count(),
                                count(all, Scenario.GRACEFUL, c),
                                Summary.millis(s.p50()),
                                Summary.millis(s.p95()),
                                Summary.millis(s.p99()),
                                Summary.millis(s.max()),
                                ratio(s.p50() / rtt.p50()),
                                ratio(s.p99() / rtt.p50()),
                                Summary.millis(stop.p50())));
            }
            md.append('\n');
            if (jitTrace != null) {
                jitTrace.append(md, options.contestants, all);
            }
            if (options.traceRedis) {
                appendSplits(md);
            }
        }
        if (values.containsKey(Scenario.CRASH)) {
            md.append("#### ").append(Scenario.CRASH.title()).append("\n\n");
            md.append(
                    "| Contestant | TTL | ok / trials | p50 | p95 | p99 | max | p50 ÷ TTL | max ÷"
                            + " TTL | lease left at kill p50 | after lapse p50 | after lapse max"
                            + " |\n");
            md.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (Contestant c : options.contestants) {
                Summary s = Summary.of(values.get(Scenario.CRASH).get(c));
                List<Trial> ok =
                        all.stream()
                                .filter(t -> t.scenario() == Scenario.CRASH)
                                .filter(t -> t.contestant() == c && t.ok())
                                .toList();
                Summary left = Summary.of(ok.stream().map(Trial::leaseLeftMs).toList());
                Summary lag =
                        Summary.of(ok.stream().map(t -> t.latencyMs() - t.leaseLeftMs()).toList());
                double ttl = c.ttl().toMillis();
                md.append(
                        String.format(
                                "| %s | %s | %d / %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                                c.label(),
                                Summary.millis(ttl),
                                s.count(),
                                count(all, Scenario.CRASH, c),
                                Summary.millis(s.p50()),
                                Summary.millis(s.p95()),
                                Summary.millis(s.p99()),
                                Summary.millis(s.max()),
                                ratio(s.p50() / ttl),
                                ratio(s.max() / ttl),
                                Summary.millis(left.p50()),
                                Summary.millis(lag.p50()),
                                Summary.millis(lag.max())));
            }
            md.append('\n');
        }
        md.append(targets(values, rtt));
        List<String> failures =
                all.stream()
                        .filter(t -> !t.ok())
                        .map(
                                t ->
                                        t.scenario().id()
                                                + " "
                                                + t.contestant().id()
                                                + " #"
                                                + t.index()
                                                + ": "
                                                + t.note())
                        .toList();
        if (!failures.isEmpty()) {
            md.append("\nFailed trials:\n\n");
            failures.forEach(f -> md.append("- ").append(f).append('\n'));
        }
        Files.writeString(options.out.resolve("summary.md"), md, StandardCharsets.UTF_8);
        System.out.println();
        System.out.println(md);

        String subtitle =
                String.format(
                        "%d trials per row; redlease %s; Redis %s; RTT p50 %s",
                        options.trials,
                        machine.get("redlease commit"),
                        machine.get("Redis").split(" ")[1],
                        Summary.millis(rtt.p50()));
        FailoverChart.write(options.chart, subtitle, options.contestants, values);
        System.out.println("wrote " + options.out.resolve("summary.md") + " and " + options.chart);
    }

    private static String targets(
            Map<Scenario, Map<Contestant, List<Double>>> values, Summary rtt) {
        StringBuilder md = new StringBuilder("#### Targets (redlease with defaults)\n\n");
        md.append("| Target | Measured | Verdict |\n|---|---|---|\n");
        Map<Contestant, List<Double>> graceful = values.get(Scenario.GRACEFUL);
        if (graceful != null && graceful.containsKey(Contestant.REDLEASE)) {
            Summary s = Summary.of(graceful.get(Contestant.REDLEASE));
            double target = 20;
            md.append(
                    String.format(
                            "| graceful hand-off p99 ≤ 20 ms | p99 %s | %s |%n",
                            Summary.millis(s.p99()),
                            s.p99() <= target
                                    ? "hit"
                                    : "miss by "
                                            + Summary.millis(s.p99() - target)
                                            + String.format(
                                                    " (%.2f× the target)", s.p99() / target)));
        }
        Map<Contestant, List<Double>> crash = values.get(Scenario.CRASH);
        if (crash != null && crash.containsKey(Contestant.REDLEASE)) {
            Summary s = Summary.of(crash.get(Contestant.REDLEASE));
            double target = Contestant.REDLEASE.ttl().toMillis() + 100;
            md.append(
                    String.format(
                            "| crash failover ≤ TTL + 100 ms (%s) | max %s | %s |%n",
                            Summary.millis(target),
                            Summary.millis(s.max()),
                            s.max() <= target
                                    ? "hit (" + Summary.millis(target - s.max()) + " to spare)"
                                    : "miss by " + Summary.millis(s.max() - target)));
        }
        return md.toString();
    }

    private static long count(List<Trial> all, Scenario scenario, Contestant contestant) {
        return all.stream()
                .filter(t -> t.scenario() == scenario && t.contestant() == contestant)
                .count();
    }

    private static String ratio(double value) {
        if (Double.isNaN(value)) {
            return "–";
        }
        return value >= 100 ? String.format("%,.0f×", value) : String.format("%.2f×", value);
    }

    /** The graceful hand-offs split where Redis ran the release and the winning acquire. */
    private void appendSplits(StringBuilder md) {
        md.append("#### Graceful hand-off in Redis's clock (MONITOR attached)\n\n");
        md.append(
                "| Contestant | split / trials | stop → release run in Redis p50 / p95 | release →"
                        + " successor's acquire run p50 / p95 | acquire → elected p50 / p95 |\n");
        md.append("|---|---|---|---|---|\n");
        for (Contestant c : options.contestants) {
            List<RedisTrace.Split> list = splits.getOrDefault(c, List.of());
            Summary toRelease = Summary.of(list.stream().map(RedisTrace.Split::toRelease).toList());
            Summary toAcquire = Summary.of(list.stream().map(RedisTrace.Split::toAcquire).toList());
            Summary toElected = Summary.of(list.stream().map(RedisTrace.Split::toElected).toList());
            md.append(
                    String.format(
                            "| %s | %d / %d | %s / %s | %s / %s | %s / %s |%n",
                            c.label(),
                            list.size(),
                            options.trials,
                            Summary.millis(toRelease.p50()),
                            Summary.millis(toRelease.p95()),
                            Summary.millis(toAcquire.p50()),
                            Summary.millis(toAcquire.p95()),
                            Summary.millis(toElected.p50()),
                            Summary.millis(toElected.p95())));
        }
        md.append('\n');
    }

    /** Command-line options. */
    private record Options(
            int trials,
            int warmup,
            List<Scenario> scenarios,
            List<Contestant> contestants,
            int parallel,
            Path out,
            Path chart,
            long seed,
            Duration handOffSpan,
            boolean traceRedis,
            boolean traceJit) {

        static Options parse(String[] args) {
            int trials = 30;
            int warmup = 3;
            List<Scenario> scenarios = List.of(Scenario.GRACEFUL, Scenario.CRASH);
            List<Contestant> contestants = List.of(Contestant.values());
            int parallel = 10;
            Path out = Path.of("benchmarks/target/failover");
            Path chart = Path.of("docs/benchmarks-failover.svg");
            long seed = 1;
            Duration handOffSpan = null;
            boolean traceRedis = false;
            boolean traceJit = false;
            for (int i = 0; i < args.length; i += 2) {
                String value = args[i + 1];
                switch (args[i]) {
                    case "--trials" -> trials = Integer.parseInt(value);
                    case "--warmup" -> warmup = Integer.parseInt(value);
                    case "--scenarios" ->
                            scenarios =
                                    Arrays.stream(value.split(","))
                                            .map(s -> Scenario.valueOf(s.toUpperCase()))
                                            .toList();
                    case "--contestants" ->
                            contestants =
                                    Arrays.stream(value.split(",")).map(Contestant::of).toList();
                    case "--parallel" -> parallel = Integer.parseInt(value);
                    case "--out" -> out = Path.of(value);
                    case "--chart" -> chart = Path.of(value);
                    case "--seed" -> seed = Long.parseLong(value);
                    case "--hand-off-span" ->
                            handOffSpan = Duration.ofMillis(Long.parseLong(value));
                    case "--trace-redis" -> traceRedis = Boolean.parseBoolean(value);
                    case "--trace-jit" -> traceJit = Boolean.parseBoolean(value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            return new Options(
                    trials,
                    warmup,
                    scenarios,
                    contestants,
                    parallel,
                    out,
                    chart,
                    seed,
                    handOffSpan,
                    traceRedis,
                    traceJit);
        }
    }
}
