package io.redlease.benchmarks.scale;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Machine;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import io.redlease.core.Term;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Many elections in one JVM at default timings: the threads redlease adds, the heap per election,
 * and the leases lost while they start and through a Redis stall ({@code CLIENT PAUSE <ms> ALL}).
 *
 * <p>This process is the one measured: it connects one Lettuce factory, takes a thread and heap
 * baseline, starts N electors on N fresh election names (each wins), and samples its own threads
 * every 50 ms from then on. After a steady window it pauses Redis. A leader cannot learn during a
 * stall whether its lease still stands, so one whose last successful renewal was sent more than TTL
 * minus the stall before the stall began must step down at its deadline; the benchmark reads each
 * term's {@link Term#remaining()} as the stall begins and reports that count as "bound by the TTL"
 * next to the step-downs it saw.
 *
 * <p>The electors start spread evenly over {@code --spread} (default: none, all at once); spread
 * over one renew interval, their renewals fall at uniformly random phases, the worst case for a
 * stall.
 *
 * <p>Usage: {@code ScaleBenchmark [--elections 10000] [--stall 4000] [--steady 15] [--spread 0]
 * [--out benchmarks/target/scale]}.
 */
public final class ScaleBenchmark {

    private final Map<String, AtomicInteger> stepDowns = new ConcurrentHashMap<>();

    private final AtomicInteger elected = new AtomicInteger();

    private final AtomicLong peakThreads = new AtomicLong();

    private volatile boolean sampling = true;

    public static void main(String[] args) throws Exception {
        int elections = 10_000;
        Duration stall = Duration.ofMillis(4000);
        Duration steady = Duration.ofSeconds(15);
        Duration spread = Duration.ZERO;
        Path out = Path.of("benchmarks/target/scale");
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--elections" -> elections = Integer.parseInt(args[i + 1]);
                case "--stall" -> stall = Duration.ofMillis(Long.parseLong(args[i + 1]));
                case "--steady" -> steady = Duration.ofSeconds(Long.parseLong(args[i + 1]));
                case "--spread" -> spread = Duration.ofMillis(Long.parseLong(args[i + 1]));
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (RedisServer redis = BenchRedis.start()) {
            new ScaleBenchmark().run(redis, elections, stall, steady, spread, out);
        }
        System.exit(0);
    }

    private void run(
            RedisServer redis, int n, Duration stall, Duration steady, Duration spread, Path out)
            throws Exception {
        LettuceConnectionFactory factory = BenchRedis.lettuce(redis.port());
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        // Load the classes a run needs before the baseline, with one election started and stopped.
        try (Elector warmUp = new Elector(template, ElectorConfig.builder("warm-up").build())) {
            warmUp.start();
            await(warmUp::isLeader, Duration.ofSeconds(10));
        }
        long baselineThreads = liveThreads();
        long baselineHeap = heapAfterGc();
        Thread sampler = new Thread(this::sample, "bench-sampler");
        sampler.setDaemon(true);
        sampler.start();

        Observer counting =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        elected.incrementAndGet();
                    }

                    @Override
                    public void onSteppedDown(StepDownReason reason) {
                        stepDowns
                                .computeIfAbsent(reason.tagValue(), r -> new AtomicInteger())
                                .incrementAndGet();
                    }
                };
        List<Elector> electors = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            electors.add(
                    new Elector(
                            template,
                            ElectorConfig.builder("scale-" + i).observer(counting).build()));
        }
        long startedAt = System.nanoTime();
        for (int i = 0; i < n; i++) {
            electors.get(i).start();
            long due = startedAt + spread.toNanos() * (i + 1) / n;
            while (System.nanoTime() < due) {
                Thread.onSpinWait(); // spreading the starts, not synchronising
            }
        }
        await(() -> electors.stream().allMatch(Elector::isLeader), Duration.ofMinutes(3));
        Duration allLeading = Duration.ofNanos(System.nanoTime() - startedAt);
        Thread.sleep(steady.toMillis()); // the steady window being measured
        long heapSteady = heapAfterGc();
        long threadsSteady = liveThreads();
        long peakBeforeStall = peakThreads.get();
        Map<String, Integer> lostWhileStarting = snapshot();

        peakThreads.set(0);
        long boundByTtl =
                electors.stream()
                        .map(Elector::term)
                        .filter(
                                term ->
                                        term.isPresent()
                                                && term.get().remaining().compareTo(stall) <= 0)
                        .count();
        long stallStart = System.nanoTime();
        redis.clientPause(stall);
        await(
                () -> System.nanoTime() - stallStart > stall.toNanos() + 5_000_000_000L,
                stall.plusSeconds(10));
        await(() -> electors.stream().allMatch(Elector::isLeader), Duration.ofMinutes(2));
        long peakDuringStall = peakThreads.get();
        Map<String, Integer> afterStall = snapshot();
        sampling = false;

        long stepDownsInStall =
                afterStall.values().stream().mapToLong(Integer::longValue).sum()
                        - lostWhileStarting.values().stream().mapToLong(Integer::longValue).sum();
        StringBuilder md = new StringBuilder();
        md.append("# Scale: ").append(n).append(" elections in one JVM\n\n");
        md.append("Started spread over ").append(spread.toMillis()).append(" ms.\n\n");
        md.append("Commit ").append(Machine.commit()).append("; ");
        md.append(Machine.describe(redis)).append("\n\n");
        md.append("| Measure | Value |\n|---|---|\n");
        row(md, "all leading after start", allLeading.toMillis() + " ms");
        row(md, "step-downs while starting and steady", lostWhileStarting.toString());
        row(
                md,
                "JVM threads added (steady, after " + steady.toSeconds() + " s)",
                Long.toString(threadsSteady - baselineThreads));
        row(
                md,
                "JVM threads added (peak before the stall)",
                Long.toString(peakBeforeStall - baselineThreads));
        row(
                md,
                "JVM threads added (peak during and after the stall)",
                Long.toString(peakDuringStall - baselineThreads));
        row(md, "redlease threads (steady)", threadsByPrefix());
        row(
                md,
                "heap per election (after GC)",
                String.format("%.1f kB", (heapSteady - baselineHeap) / 1024.0 / n));
        row(md, "stall", stall.toMillis() + " ms (CLIENT PAUSE ALL)");
        row(
                md,
                "leases whose deadline fell inside the stall (bound by the TTL)",
                Long.toString(boundByTtl));
        row(md, "step-downs through the stall", stepDownsInStall + " " + afterStall);
        row(md, "terms won in all", Integer.toString(elected.get()));
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
        electors.forEach(Elector::stopAsync);
        electors.forEach(Elector::close);
        factory.destroy();
    }

    private static void row(StringBuilder md, String name, String value) {
        md.append("| ").append(name).append(" | ").append(value).append(" |\n");
    }

    private Map<String, Integer> snapshot() {
        return stepDowns.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().get()));
    }

    private void sample() {
        while (sampling) {
            peakThreads.accumulateAndGet(liveThreads(), Math::max);
            try {
                Thread.sleep(50); // the sampling period
            } catch (InterruptedException ex) {
                return;
            }
        }
    }

    private static String threadsByPrefix() {
        return Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .filter(name -> name.startsWith("redlease-"))
                .map(name -> name.replaceAll("-\\d+$", ""))
                .collect(Collectors.groupingBy(name -> name, Collectors.counting()))
                .toString();
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

    private static void await(java.util.function.BooleanSupplier condition, Duration timeout)
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
