package io.redlease.benchmarks.partition;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.ChildJvm;
import io.redlease.benchmarks.support.EventBoard;
import io.redlease.benchmarks.support.Machine;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.core.task.SyncTaskExecutor;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.PatternTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Rebalancing of a partitioned election over instances in separate JVMs ({@link PartitionMember}
 * children, library defaults apart from the time to live), watched from Redis itself: the harness
 * reads every partition's {@code :leader} key (one {@code MGET}, every 5 ms) and calls the
 * partitions balanced when each is held by a live instance and the live instances' counts differ by
 * at most one, stamped with the last take before that poll (a partition's lease key set, heard from
 * Redis's keyspace events on the harness's I/O thread, as are the release announcements below).
 * Moves are the terms won meanwhile: the sum of the partitions' {@code :fence} counters' increase
 * (every term won increments its partition's counter once).
 *
 * <p>Each trial, on a fresh election, with {@code --instances n} (4 by default): {@code n - 1}
 * instances start together (cold start); one more starts (join to {@code n}, timed from its {@code
 * STARTING} stamp); one of the first ones closes (graceful leave to {@code n - 1}, timed from its
 * {@code LEAVING} stamp); another starts (a second join to {@code n}); one instance's JVM gets
 * {@code SIGKILL} (timed from the kill). The harness also subscribes to the partitions' release
 * announcements and reports, per event, the time from the first release to balanced and from the
 * first release to the last (for a leave, the leaver's releases only: a hand-over still under way
 * from the join before is not counted). Times come from {@link System#nanoTime()}, one clock for
 * every process on Linux.
 *
 * <p>{@code --pause} (0 by default) waits that long after each event balanced before the next
 * begins, so that an event is not measured while the instances still finish the one before (the
 * electors of moved partitions unsubscribing, the new ones subscribing).
 *
 * <p>Usage: {@code PartitionJvmBenchmark [--trials 5] [--instances 4] [--partitions 256] [--ttl 5s]
 * [--pause 0s] [--out benchmarks/target/partitions-jvm]}.
 */
public final class PartitionJvmBenchmark {

    private static final List<String> CHILD_JVM_ARGS =
            List.of(
                    "-Xmx256m",
                    "-XX:+UseSerialGC",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final RedisServer redis;

    private final StringRedisTemplate template;

    private final int partitions;

    private final Duration ttl;

    private final Path out;

    private final int instances;

    /** How long to wait after an event balanced before the next begins. */
    private final Duration pause;

    private final LettuceConnectionFactory factory;

    /** The first and the last release announced since {@link #releases} was reset (nanos). */
    private final long[] releases = new long[2];

    /** Whose releases count (the leaver's during a leave), or null for anyone's. */
    private volatile String releaser;

    /** When a lease key of the election was last set (a partition taken; nanos), or 0. */
    private volatile long lastTaken;

    private final EventBoard board = new EventBoard();

    private final Map<String, List<Result>> results = new HashMap<>();

    private PartitionJvmBenchmark(
            RedisServer redis,
            int partitions,
            Duration ttl,
            Path out,
            int instances,
            Duration pause) {
        this.redis = redis;
        this.pause = pause;
        this.instances = instances;
        this.factory = BenchRedis.lettuce(redis.port());
        this.template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        this.partitions = partitions;
        this.ttl = ttl;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        int trials = 5;
        int partitions = 256;
        Duration ttl = Duration.ofSeconds(5);
        Path out = Path.of("benchmarks/target/partitions-jvm");
        int instances = 4;
        Duration pause = Duration.ZERO;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--trials" -> trials = Integer.parseInt(args[i + 1]);
                case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
                case "--ttl" -> ttl = PartitionBenchmark.duration(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                case "--instances" -> instances = Integer.parseInt(args[i + 1]);
                case "--pause" -> pause = PartitionBenchmark.duration(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (RedisServer redis = BenchRedis.start()) {
            if (instances < 2) {
                throw new IllegalArgumentException("--instances must be at least 2");
            }
            new PartitionJvmBenchmark(redis, partitions, ttl, out, instances, pause).run(trials);
        }
        System.exit(0);
    }

    private void run(int trials) throws Exception {
        for (int t = 1; t <= trials; t++) {
            trial("bench-partitions-jvm-" + t);
            System.out.println("trial " + t + ": " + results);
        }
        PartitionedElectionConfig sample =
                PartitionedElectionConfig.builder("sample", partitions).ttl(ttl).build();
        StringBuilder md = new StringBuilder();
        md.append("# Partitioned leadership: rebalancing, separate JVMs\n\n")
                .append(partitions)
                .append(" partitions, one JVM per instance, ")
                .append(instances - 1)
                .append(" ↔ ")
                .append(instances)
                .append(" instances, ")
                .append(trials)
                .append(" trials; TTL ")
                .append(sample.ttl().toMillis())
                .append(" ms, renew interval ")
                .append(sample.renewInterval().toMillis())
                .append(" ms, balance interval ")
                .append(sample.balanceInterval().toMillis())
                .append(" ms, settle ")
                .append(sample.settle().toMillis())
                .append(" ms (defaults); ")
                .append(pause.toMillis())
                .append(" ms pause after each event.\n\n");
        Machine.describe(redis)
                .forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append(
                        "\n| Event | samples | time p50 | time max | moves p50 | moves max | first"
                                + " change p50 / max | longest free p50 / max | first release to"
                                + " balanced p50 / max | first to last release p50 / max | the poll saw"
                                + " it later by, p50 / max |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (String event :
                List.of(
                        "cold start, " + (instances - 1) + " together",
                        "join",
                        "graceful leave",
                        "SIGKILL")) {
            row(md, event, results.getOrDefault(event, List.of()));
        }
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
    }

    private static void row(StringBuilder md, String event, List<Result> sample) {
        long[] millis = sample.stream().mapToLong(Result::millis).sorted().toArray();
        long[] moves = sample.stream().mapToLong(Result::moves).sorted().toArray();
        long[] first = sample.stream().mapToLong(Result::firstChange).sorted().toArray();
        long[] pickUp = sample.stream().mapToLong(Result::pickUp).sorted().toArray();
        long[] fromRelease =
                sample.stream()
                        .mapToLong(Result::fromFirstRelease)
                        .filter(v -> v >= 0)
                        .sorted()
                        .toArray();
        long[] releasing =
                sample.stream().mapToLong(Result::releasing).filter(v -> v >= 0).sorted().toArray();
        long[] pollLag = sample.stream().mapToLong(Result::pollLag).sorted().toArray();
        if (millis.length == 0) {
            return;
        }
        int mid = (millis.length - 1) / 2;
        int last = millis.length - 1;
        md.append(
                String.format(
                        "| %s | %d | %d ms | %d ms | %d | %d | %d / %d ms | %d / %d ms | %s | %s | %s"
                                + " |%n",
                        event,
                        millis.length,
                        millis[mid],
                        millis[last],
                        moves[mid],
                        moves[last],
                        first[mid],
                        first[last],
                        pickUp[mid],
                        pickUp[last],
                        micros(fromRelease),
                        micros(releasing),
                        micros(pollLag)));
    }

    /** p50 / max of microsecond figures, in milliseconds with one decimal; "—" when none. */
    private static String micros(long[] sorted) {
        if (sorted.length == 0) {
            return "—";
        }
        return String.format(
                "%.1f / %.1f ms",
                sorted[(sorted.length - 1) / 2] / 1000.0, sorted[sorted.length - 1] / 1000.0);
    }

    private void trial(String name) throws Exception {
        List<ChildJvm> children = new ArrayList<>();
        RedisMessageListenerContainer announcements = listen(name);
        try {
            int first = instances - 1;
            for (int i = 0; i <= instances; i++) {
                children.add(member(name, i));
            }
            for (ChildJvm child : children) {
                board.await(child, "READY", name, WAIT);
            }
            Set<String> live = new TreeSet<>();
            long[] fences = fences(name);
            resetReleases();
            for (int i = 0; i < first; i++) {
                children.get(i).send("start");
                live.add("i" + i);
            }
            long cold = board.await(children.get(0), "STARTING", name, WAIT).nanos();
            record("cold start, " + first + " together", name, Set.copyOf(live), cold, fences);
            Thread.sleep(pause.toMillis());

            fences = fences(name);
            resetReleases();
            children.get(first).send("start");
            live.add("i" + first);
            long joined = board.await(children.get(first), "STARTING", name, WAIT).nanos();
            record("join", name, Set.copyOf(live), joined, fences);
            Thread.sleep(pause.toMillis());

            fences = fences(name);
            resetReleases("i1");
            children.get(1).send("leave");
            live.remove("i1");
            long leaving = board.await(children.get(1), "LEAVING", name, WAIT).nanos();
            record("graceful leave", name, Set.copyOf(live), leaving, fences);
            board.await(children.get(1), "LEFT", name, WAIT);
            Thread.sleep(pause.toMillis());

            fences = fences(name);
            resetReleases();
            children.get(instances).send("start");
            live.add("i" + instances);
            joined = board.await(children.get(instances), "STARTING", name, WAIT).nanos();
            record("join", name, Set.copyOf(live), joined, fences);
            Thread.sleep(pause.toMillis());

            fences = fences(name);
            resetReleases();
            long killed = System.nanoTime();
            children.get(first).kill();
            live.remove("i" + first);
            record("SIGKILL", name, Set.copyOf(live), killed, fences);
        } finally {
            children.forEach(ChildJvm::close);
            board.forget(name);
            announcements.destroy();
        }
    }

    /** Stamps the first and the last release announced on any of the election's partitions. */
    private RedisMessageListenerContainer listen(String name) throws Exception {
        RedisMessageListenerContainer container = new RedisMessageListenerContainer();
        container.setConnectionFactory(factory);
        // Stamped on the client's I/O thread as each message arrives: the default executor starts
        // a thread per message, which on a loaded machine spread the stamps by 100 ms and more.
        container.setTaskExecutor(new SyncTaskExecutor());
        container.afterPropertiesSet();
        container.addMessageListener(
                (message, pattern) -> {
                    long now = System.nanoTime();
                    String from = releaser;
                    if (from != null
                            && !from.equals(
                                    new String(message.getBody(), StandardCharsets.UTF_8))) {
                        return;
                    }
                    synchronized (releases) {
                        if (releases[0] == 0) {
                            releases[0] = now;
                        }
                        releases[1] = now;
                    }
                },
                new PatternTopic("{" + name + ":p[0-9]*}:released")); // partitions only
        // A partition taken: its lease key set (renewals only extend it). The poll below sees the
        // balance up to a few tens of ms late on a loaded machine; the last take before it says
        // when it was reached.
        template.execute(
                (RedisCallback<Void>)
                        connection -> {
                            connection.serverCommands().setConfig("notify-keyspace-events", "K$");
                            return null;
                        });
        container.addMessageListener(
                (message, pattern) -> {
                    long now = System.nanoTime();
                    if ("set".equals(new String(message.getBody(), StandardCharsets.UTF_8))) {
                        lastTaken = now;
                    }
                },
                new PatternTopic("__keyspace@0__:{" + name + ":p[0-9]*}:leader"));
        container.start();
        return container;
    }

    private void resetReleases() {
        resetReleases(null);
    }

    /** Forgets the releases seen so far; from now on only those of the given instance count. */
    private void resetReleases(String from) {
        releaser = from;
        synchronized (releases) {
            releases[0] = 0;
            releases[1] = 0;
        }
    }

    private ChildJvm member(String name, int index) {
        return ChildJvm.start(
                name + "-i" + index,
                CHILD_JVM_ARGS,
                PartitionMember.class,
                List.of(
                        Integer.toString(redis.port()),
                        name,
                        "i" + index,
                        Integer.toString(partitions),
                        Long.toString(ttl.toMillis())),
                board,
                out.resolve("logs"));
    }

    private void record(String event, String name, Set<String> live, long since, long[] fences)
            throws Exception {
        long[] phases = awaitBalanced(name, live, since);
        long took = phases[0];
        long balancedAt = since + took;
        long firstRelease;
        long lastRelease;
        synchronized (releases) {
            firstRelease = releases[0];
            lastRelease = releases[1];
        }
        long[] after = fences(name);
        long moves = 0;
        for (int p = 0; p < partitions; p++) {
            moves += after[p] - fences[p];
        }
        results.computeIfAbsent(event, e -> new ArrayList<>())
                .add(
                        new Result(
                                TimeUnit.NANOSECONDS.toMillis(took),
                                moves,
                                TimeUnit.NANOSECONDS.toMillis(phases[1]),
                                TimeUnit.NANOSECONDS.toMillis(phases[2]),
                                firstRelease == 0
                                        ? -1
                                        : TimeUnit.NANOSECONDS.toMicros(balancedAt - firstRelease),
                                firstRelease == 0
                                        ? -1
                                        : TimeUnit.NANOSECONDS.toMicros(lastRelease - firstRelease),
                                TimeUnit.NANOSECONDS.toMicros(phases[3])));
    }

    /**
     * Polls the leases every 5 ms until balanced over the live instances; returns the time (of the
     * last partition taken before the poll that saw the balance, from Redis's keyspace events), the
     * time until the first lease changed hands or fell free, the longest a lease stayed free (the
     * pick-up of a released or lapsed partition; 0 for partitions never seen free), and how much
     * later the poll saw the balance.
     */
    private long[] awaitBalanced(String name, Set<String> live, long since) throws Exception {
        long deadline = since + WAIT.toNanos();
        List<String> keys = keys(name, ":leader");
        List<String> first = null;
        long firstChange = -1;
        long[] freeSince = new long[partitions];
        long longestFree = 0;
        while (true) {
            List<String> holders = template.opsForValue().multiGet(keys);
            long now = System.nanoTime();
            if (first == null) {
                first = holders;
            } else if (firstChange < 0 && !holders.equals(first)) {
                firstChange = now - since;
            }
            for (int p = 0; p < partitions; p++) {
                if (holders.get(p) == null && freeSince[p] == 0) {
                    freeSince[p] = now;
                } else if (holders.get(p) != null && freeSince[p] != 0) {
                    longestFree = Math.max(longestFree, now - freeSince[p]);
                    freeSince[p] = 0;
                }
            }
            if (balanced(holders, live)) {
                long taken = lastTaken;
                long at = taken > since && taken <= now ? taken : now;
                return new long[] {at - since, Math.max(firstChange, 0), longestFree, now - at};
            }
            if (now > deadline) {
                throw new TimeoutException(name + " not balanced over " + live + ": " + holders);
            }
            Thread.sleep(5); // polling a condition in a benchmark harness
        }
    }

    private static boolean balanced(List<String> holders, Set<String> live) {
        Map<String, Integer> counts = new HashMap<>();
        live.forEach(id -> counts.put(id, 0));
        for (String holder : holders) {
            if (holder == null || !live.contains(holder)) {
                return false;
            }
            counts.merge(holder, 1, Integer::sum);
        }
        int min = counts.values().stream().mapToInt(Integer::intValue).min().orElse(0);
        int max = counts.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        return max - min <= 1;
    }

    private long[] fences(String name) {
        List<String> values = template.opsForValue().multiGet(keys(name, ":fence"));
        long[] fences = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            String value = values.get(p);
            fences[p] = value == null ? 0 : Long.parseLong(value);
        }
        return fences;
    }

    private List<String> keys(String name, String suffix) {
        List<String> keys = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            keys.add(PartitionedElection.electionName(name, p) + suffix);
        }
        return keys;
    }

    /**
     * One event: time to balanced, moves, time to the first lease that changed hands or fell free,
     * and the longest a lease stayed free.
     */
    private record Result(
            long millis,
            long moves,
            long firstChange,
            long pickUp,
            long fromFirstRelease,
            long releasing,
            long pollLag) {
        @Override
        public String toString() {
            return millis
                    + " ms / "
                    + moves
                    + " moves (first change "
                    + firstChange
                    + " ms, longest free "
                    + pickUp
                    + " ms, first release to balanced "
                    + fromFirstRelease
                    + " µs, releasing "
                    + releasing
                    + " µs, seen by the poll "
                    + pollLag
                    + " µs later)";
        }
    }
}
