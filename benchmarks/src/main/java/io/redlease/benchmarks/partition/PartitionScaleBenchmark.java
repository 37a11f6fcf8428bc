package io.redlease.benchmarks.partition;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Machine;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisServer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One partitioned election with many partitions in one JVM, at default timings: the threads it
 * adds, the heap per partition, and the Redis load per idle partition beside that of as many idle
 * ordinary elections, on a {@code redis-server} of the benchmark's own.
 *
 * <p>Phase 1 starts one ordinary election (it wins), then one instance of a partitioned election
 * with N partitions beside it (it wins them all, then renews them and refreshes its member entry);
 * the JVM's threads are sampled every 50 ms, and listed by name at each step: before redlease
 * starts anything (the application's Lettuce client already connected), with the one election, with
 * the partitions after the load window, and again after {@code --idle} seconds with nothing
 * changing (past the engine pools' keep-alive: callback threads 60 s, Redis I/O threads 30 s). The
 * heap is read after full GCs. Phase 2 closes it and starts N ordinary electors, each winning its
 * own election and then only renewing. In each phase, after a settling pause, every command Redis
 * ran over a window is counted ({@code INFO commandstats} delta, commands run inside scripts
 * included), and the requests (script calls) apart.
 *
 * <p>Usage: {@code PartitionScaleBenchmark [--partitions 10000] [--window 20] [--out
 * benchmarks/target/partitions-scale]}.
 */
public final class PartitionScaleBenchmark {

    private final RedisServer redis;

    private final StringRedisTemplate template;

    private volatile long peakThreads;

    private volatile boolean sampling = true;

    private PartitionScaleBenchmark(RedisServer redis, StringRedisTemplate template) {
        this.redis = redis;
        this.template = template;
    }

    public static void main(String[] args) throws Exception {
        int partitions = 10_000;
        Duration window = Duration.ofSeconds(20);
        Duration idle = Duration.ofSeconds(65);
        Path out = Path.of("benchmarks/target/partitions-scale");
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
                case "--window" -> window = Duration.ofSeconds(Long.parseLong(args[i + 1]));
                case "--idle" -> idle = Duration.ofSeconds(Long.parseLong(args[i + 1]));
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (RedisServer redis = BenchRedis.start()) {
            LettuceConnectionFactory factory = BenchRedis.lettuce(redis.port());
            StringRedisTemplate template = new StringRedisTemplate(factory);
            template.afterPropertiesSet();
            new PartitionScaleBenchmark(redis, template).run(partitions, window, idle, out);
            factory.destroy();
        }
        System.exit(0);
    }

    private void run(int n, Duration window, Duration idle, Path out) throws Exception {
        // The baselines come before redlease starts anything: its engine threads count.
        Thread sampler = new Thread(this::sample, "bench-sampler");
        sampler.setDaemon(true);
        sampler.start();
        long baselineThreads = liveThreads();
        Map<String, Long> baselineNames = threadNames();
        Elector single = new Elector(template, ElectorConfig.builder("scale-single").build());
        single.start();
        await(single::isLeader, Duration.ofMinutes(1));
        long singleThreads = liveThreads();
        Map<String, Long> singleNames = threadNames();
        long singleHeap = heapAfterGc();
        PartitionedElection election =
                new PartitionedElection(
                        template,
                        PartitionedElectionConfig.builder("scale-partitions", n)
                                .instanceId("only")
                                .build());
        long startedAt = System.nanoTime();
        election.start();
        await(() -> election.owned().size() == n, Duration.ofMinutes(3));
        Duration allOwned = Duration.ofNanos(System.nanoTime() - startedAt);
        Load partitions = load(window);
        long heap = heapAfterGc() - singleHeap;
        long threads = liveThreads();
        Map<String, Long> steadyNames = threadNames();
        Thread.sleep(idle.toMillis()); // nothing changes meanwhile: the pools' keep-alive passes
        long idleThreads = liveThreads();
        Map<String, Long> idleNames = threadNames();
        sampling = false; // the sampler is in every count above, baseline included
        election.close();
        single.close();

        List<Elector> electors = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            electors.add(new Elector(template, ElectorConfig.builder("idle-" + i).build()));
        }
        electors.forEach(Elector::start);
        await(() -> electors.stream().allMatch(Elector::isLeader), Duration.ofMinutes(3));
        Load elections = load(window);
        electors.forEach(Elector::stopAsync);
        electors.forEach(Elector::close);
        electors.clear();

        StringBuilder md = new StringBuilder();
        md.append("# Partitioned leadership: ").append(n).append(" partitions in one JVM\n\n");
        Machine.describe(redis)
                .forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n| Measure | Value |\n|---|---|\n");
        row(md, "all partitions owned after start (one instance)", allOwned.toMillis() + " ms");
        row(md, "threads before redlease (Lettuce connected)", baselineNames.toString());
        row(
                md,
                "one ordinary election: threads added / by name",
                singleThreads - baselineThreads + " / " + added(baselineNames, singleNames));
        row(
                md,
                "+ partitions, after the window: threads added to no redlease / to one election",
                (threads - baselineThreads) + " / " + (threads - singleThreads));
        row(md, "  by name, added to one election", added(singleNames, steadyNames));
        row(
                md,
                "+ partitions, after "
                        + idle.toSeconds()
                        + " s idle: added to no redlease / to one"
                        + " election",
                (idleThreads - baselineThreads) + " / " + (idleThreads - singleThreads));
        row(md, "  by name, added to no redlease", added(baselineNames, idleNames));
        row(
                md,
                "peak threads added to no redlease (sampled every 50 ms)",
                peakThreads - baselineThreads + "");
        row(md, "heap per partition (after GC)", String.format("%.2f kB", heap / 1024.0 / n));
        row(md, "Redis commands/s per idle ordinary election (leader)", elections.perUnit(n));
        row(md, "Redis commands/s per idle partition (held)", partitions.perUnit(n));
        row(md, "Redis requests/s per idle ordinary election", elections.requestsPerUnit(n));
        row(md, "Redis requests/s per idle partition", partitions.requestsPerUnit(n));
        row(md, "commands by name, ordinary elections", elections.calls().toString());
        row(md, "commands by name, partitions", partitions.calls().toString());
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
    }

    /** Commands Redis ran over a window, after a settling pause of one window's fifth. */
    private Load load(Duration window) throws InterruptedException {
        Thread.sleep(window.toMillis() / 5); // settling before the window being measured
        Map<String, Long> before = calls();
        long start = System.nanoTime();
        Thread.sleep(window.toMillis()); // the window being measured
        Map<String, Long> after = calls();
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Long> delta =
                after.entrySet().stream()
                        .filter(e -> !e.getKey().equals("info"))
                        .collect(
                                Collectors.toMap(
                                        Map.Entry::getKey,
                                        e -> e.getValue() - before.getOrDefault(e.getKey(), 0L)));
        delta.values().removeIf(v -> v == 0);
        return new Load(delta, seconds);
    }

    private Map<String, Long> calls() {
        return BenchRedis.commandCalls(redis.info("commandstats"));
    }

    private record Load(Map<String, Long> calls, double seconds) {

        String perUnit(int units) {
            long total = calls.values().stream().mapToLong(Long::longValue).sum();
            return String.format("%.3f", total / seconds / units);
        }

        String requestsPerUnit(int units) {
            long requests =
                    calls.getOrDefault("evalsha", 0L)
                            + calls.getOrDefault("eval", 0L)
                            + calls.getOrDefault("publish", 0L);
            return String.format("%.3f", requests / seconds / units);
        }
    }

    private static void row(StringBuilder md, String name, String value) {
        md.append("| ").append(name).append(" | ").append(value).append(" |\n");
    }

    private void sample() {
        while (sampling) {
            peakThreads = Math.max(peakThreads, liveThreads());
            try {
                Thread.sleep(50); // the sampling period
            } catch (InterruptedException ex) {
                return;
            }
        }
    }

    /**
     * Live threads by name, numbered suffixes folded: {@code redlease-loop-0} counts as {@code
     * redlease-loop}.
     */
    private static Map<String, Long> threadNames() {
        return Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .map(name -> name.replaceAll("-\\d+$", ""))
                .collect(Collectors.groupingBy(name -> name, TreeMap::new, Collectors.counting()));
    }

    /** The names whose count rose (or fell) from one listing to another, with the difference. */
    private static String added(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> diff = new TreeMap<>();
        after.forEach((name, count) -> diff.put(name, count - before.getOrDefault(name, 0L)));
        before.forEach((name, count) -> diff.putIfAbsent(name, -count));
        diff.values().removeIf(count -> count == 0);
        return diff.toString();
    }

    private static long liveThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    private static long heapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static void await(BooleanSupplier condition, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + timeout);
            }
            Thread.sleep(20); // polling a condition in a benchmark harness
        }
    }
}
