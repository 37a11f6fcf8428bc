package io.redlease.benchmarks.partition;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Machine;
import io.redlease.core.StepDownReason;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Rebalancing of a partitioned election: 256 partitions over 4 instances in one JVM, each on a
 * connection factory of its own (the fourth through a TCP proxy, so it can be cut off). Each trial
 * times, from the event to the moment every partition is held by exactly one live instance and
 * their counts differ by at most one, and counts the terms won meanwhile (moves):
 *
 * <ul>
 *   <li>cold start: 4 instances started together;
 *   <li>join: a fourth instance started beside 3 balanced ones;
 *   <li>graceful leave: one of 4 closed;
 *   <li>cut off: the fourth instance's connection blackholed (no release, no leave), as a SIGKILL
 *       or a network partition looks to the others.
 * </ul>
 *
 * <p>Usage: {@code PartitionBenchmark [--trials 5] [--partitions 256] [--ttl 5s] [--settle 0]
 * [--out benchmarks/target/partitions]}. Durations as {@code 500ms} or {@code 5s}; a settle of 0
 * means the default (the renew interval).
 */
public final class PartitionBenchmark {

    private static final int INSTANCES = 4;

    private final RedisServer redis;

    private final int partitions;

    private final Duration ttl;

    private final Duration settle;

    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    /** The terms won in the current trial, by partition: tokens, so a move is counted once. */
    private final Map<Integer, Set<Long>> won = new ConcurrentHashMap<>();

    private final long[] before;

    private int trial;

    private PartitionBenchmark(RedisServer redis, int partitions, Duration ttl, Duration settle) {
        this.redis = redis;
        this.partitions = partitions;
        this.ttl = ttl;
        this.settle = settle;
        this.before = new long[partitions];
    }

    public static void main(String[] args) throws Exception {
        int trials = 5;
        int partitions = 256;
        Duration ttl = Duration.ofSeconds(5);
        Duration settle = Duration.ZERO;
        Path out = Path.of("benchmarks/target/partitions");
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--trials" -> trials = Integer.parseInt(args[i + 1]);
                case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
                case "--ttl" -> ttl = duration(args[i + 1]);
                case "--settle" -> settle = duration(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (RedisServer redis = BenchRedis.start()) {
            new PartitionBenchmark(redis, partitions, ttl, settle).run(trials, out);
        }
        System.exit(0);
    }

    static Duration duration(String text) {
        return text.endsWith("ms")
                ? Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)))
                : text.endsWith("s")
                        ? Duration.ofSeconds(Long.parseLong(text.substring(0, text.length() - 1)))
                        : Duration.ofMillis(Long.parseLong(text));
    }

    private void run(int trials, Path out) throws Exception {
        List<Result> cold = new ArrayList<>();
        List<Result> join = new ArrayList<>();
        List<Result> leave = new ArrayList<>();
        List<Result> cut = new ArrayList<>();
        PartitionedElectionConfig sample = config("sample", "x");
        for (int t = 0; t < trials; t++) {
            cold.add(coldStart());
            join.add(join());
            leave.add(leave());
            cut.add(cutOff());
            System.out.printf(
                    "trial %d: cold %s, join %s, leave %s, cut %s%n",
                    t + 1, cold.get(t), join.get(t), leave.get(t), cut.get(t));
        }
        StringBuilder md = new StringBuilder();
        md.append("# Partitioned leadership: rebalancing\n\n");
        md.append(partitions)
                .append(" partitions, ")
                .append(INSTANCES)
                .append(" instances in one JVM (connection factories of their own), ")
                .append(trials)
                .append(" trials each; TTL ")
                .append(sample.ttl().toMillis())
                .append(" ms, renew interval ")
                .append(sample.renewInterval().toMillis())
                .append(" ms, balance interval ")
                .append(sample.balanceInterval().toMillis())
                .append(" ms, settle ")
                .append(sample.settle().toMillis())
                .append(" ms.\n\n");
        Machine.describe(redis)
                .forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\nTime from the event to balanced (every partition held by exactly one live")
                .append(" instance, counts within ±1), and terms won meanwhile (moves):\n\n");
        md.append(
                "| Event | time p50 | time max | moves p50 | moves max |\n|---|---|---|---|---|\n");
        row(md, "cold start (4 together)", cold);
        row(md, "join (3 → 4)", join);
        row(md, "graceful leave (4 → 3)", leave);
        row(md, "cut off, no release (4 → 3)", cut);
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
        factories.forEach(LettuceConnectionFactory::destroy);
    }

    private static void row(StringBuilder md, String event, List<Result> results) {
        long[] millis = results.stream().mapToLong(Result::millis).sorted().toArray();
        long[] moves = results.stream().mapToLong(Result::moves).sorted().toArray();
        md.append("| ")
                .append(event)
                .append(" | ")
                .append(millis[(millis.length - 1) / 2])
                .append(" ms | ")
                .append(millis[millis.length - 1])
                .append(" ms | ")
                .append(moves[(moves.length - 1) / 2])
                .append(" | ")
                .append(moves[moves.length - 1])
                .append(" |\n");
    }

    private Result coldStart() throws Exception {
        String name = name();
        List<PartitionedElection> live = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            live.add(instance(name, "i" + i, template()));
        }
        snapshot(live);
        long start = System.nanoTime();
        live.forEach(PartitionedElection::start);
        Result result = awaitBalanced(live, start);
        live.forEach(PartitionedElection::close);
        return result;
    }

    private Result join() throws Exception {
        String name = name();
        List<PartitionedElection> live = started(name, 3);
        awaitBalanced(live, System.nanoTime());
        PartitionedElection joiner = instance(name, "i3", template());
        snapshot(live);
        long start = System.nanoTime();
        joiner.start();
        live.add(joiner);
        Result result = awaitBalanced(live, start);
        live.forEach(PartitionedElection::close);
        return result;
    }

    private Result leave() throws Exception {
        String name = name();
        List<PartitionedElection> live = started(name, 4);
        awaitBalanced(live, System.nanoTime());
        snapshot(live);
        long start = System.nanoTime();
        live.remove(1).close();
        Result result = awaitBalanced(live, start);
        live.forEach(PartitionedElection::close);
        return result;
    }

    private Result cutOff() throws Exception {
        String name = name();
        List<PartitionedElection> live = started(name, 3);
        try (TcpProxy proxy = TcpProxy.start(BenchRedis.HOST, redis.port())) {
            PartitionedElection victim = instance(name, "i3", template(proxy.port()));
            victim.start();
            live.add(victim);
            awaitBalanced(live, System.nanoTime());
            snapshot(live);
            live.remove(victim);
            long start = System.nanoTime();
            proxy.blackhole();
            Result result = awaitBalanced(live, start);
            live.forEach(PartitionedElection::close);
            proxy.pass();
            victim.close();
            return result;
        }
    }

    private List<PartitionedElection> started(String name, int count) {
        List<PartitionedElection> live = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            PartitionedElection instance = instance(name, "i" + i, template());
            instance.start();
            live.add(instance);
        }
        return live;
    }

    private String name() {
        return "bench-partitions-" + (++trial);
    }

    private PartitionedElectionConfig config(String name, String id) {
        return PartitionedElectionConfig.builder(name, partitions)
                .ttl(ttl)
                .settle(settle)
                .instanceId(id)
                .listener(
                        new PartitionListener() {
                            @Override
                            public void onAssigned(int partition, long token) {
                                won.computeIfAbsent(partition, p -> ConcurrentHashMap.newKeySet())
                                        .add(token);
                            }

                            @Override
                            public void onRevoked(
                                    int partition, long token, StepDownReason reason) {}
                        })
                .build();
    }

    private PartitionedElection instance(String name, String id, StringRedisTemplate template) {
        return new PartitionedElection(template, config(name, id));
    }

    private StringRedisTemplate template() {
        return template(redis.port());
    }

    private StringRedisTemplate template(int port) {
        LettuceConnectionFactory factory = BenchRedis.lettuce(port);
        factories.add(factory);
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        return template;
    }

    /**
     * Polls every 5 ms until balanced, then waits for the winners' assignment callbacks so every
     * move is counted.
     */
    private Result awaitBalanced(List<PartitionedElection> live, long start) throws Exception {
        long deadline = start + TimeUnit.SECONDS.toNanos(60);
        while (!balanced(live)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not balanced within 60 s: " + diagnosis(live));
            }
            Thread.sleep(5); // polling a condition in a benchmark harness
        }
        long took = System.nanoTime() - start;
        waitFor(() -> callbacksHeard(live));
        long moves = won.values().stream().mapToLong(Set::size).sum();
        return new Result(TimeUnit.NANOSECONDS.toMillis(took), moves);
    }

    /** Describes each instance's view and the balancing threads' stacks, for a run that hangs. */
    private String diagnosis(List<PartitionedElection> live) {
        StringBuilder text = new StringBuilder();
        for (PartitionedElection instance : live) {
            text.append('\n')
                    .append(instance.instanceId())
                    .append(": owns ")
                    .append(instance.owned().size())
                    .append(", share ")
                    .append(instance.share())
                    .append(", members ")
                    .append(instance.members())
                    .append(", failure ")
                    .append(instance.redisFailure().map(Throwable::toString).orElse("none"));
        }
        int[] holders = new int[partitions];
        for (PartitionedElection instance : live) {
            instance.owned().forEach(p -> holders[p]++);
        }
        for (int p = 0; p < partitions; p++) {
            if (holders[p] != 1) {
                text.append("\npartition ").append(p).append(" held by ").append(holders[p]);
            }
        }
        Thread.getAllStackTraces()
                .forEach(
                        (thread, stack) -> {
                            if (thread.getName().startsWith("redlease-partitions")) {
                                text.append("\n").append(thread.getName());
                                for (StackTraceElement frame : stack) {
                                    text.append("\n    at ").append(frame);
                                }
                            }
                        });
        return text.toString();
    }

    private boolean balanced(List<PartitionedElection> live) {
        int[] holders = new int[partitions];
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (PartitionedElection instance : live) {
            Set<Integer> owned = instance.owned();
            min = Math.min(min, owned.size());
            max = Math.max(max, owned.size());
            for (int partition : owned) {
                holders[partition]++;
            }
        }
        return max - min <= 1 && Arrays.stream(holders).allMatch(h -> h == 1);
    }

    /** Whether every partition whose term began in this trial has had its assignment heard. */
    private boolean callbacksHeard(List<PartitionedElection> live) {
        for (PartitionedElection instance : live) {
            for (int partition : instance.owned()) {
                long token = instance.token(partition).orElse(0);
                Set<Long> tokens = won.get(partition);
                if (token > before[partition] && (tokens == null || !tokens.contains(token))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Notes the newest token of every partition held now: terms up to these are not moves. */
    private void snapshot(List<PartitionedElection> live) {
        Arrays.fill(before, 0);
        for (PartitionedElection instance : live) {
            for (int partition : instance.owned()) {
                before[partition] =
                        Math.max(before[partition], instance.token(partition).orElse(0));
            }
        }
        won.clear();
    }

    private static void waitFor(Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.get() && System.nanoTime() < deadline) {
            Thread.sleep(5); // polling a condition in a benchmark harness
        }
    }

    private record Result(long millis, long moves) {
        @Override
        public String toString() {
            return millis + " ms / " + moves + " moves";
        }
    }
}
