package io.redlease.benchmarks.jmh;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Machine;
import io.redlease.test.RedisServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the JMH benchmarks of this module with fixed settings and writes a Markdown summary: fenced
 * writes with 1 and 2 threads, acquire plus release, and {@code @LeaderOnly}; then the fenced
 * against plain ratio once more, measured in alternation ({@link PairedWrites}).
 *
 * <p>Usage: {@code JmhSuite [--out benchmarks/target/jmh] [--warmup 3] [--iterations 5] [--time 2]
 * [--paired-only false]} (iterations of {@code --time} seconds, one fork each; {@code --paired-only
 * true} runs only the measurement in alternation, in about half a minute).
 */
public final class JmhSuite {

    private static final int PAIRED_ROUNDS = 300;

    private static final int PAIRED_BLOCK = 100;

    private JmhSuite() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of("benchmarks/target/jmh");
        int warmup = 3;
        int iterations = 5;
        int seconds = 2;
        boolean pairedOnly = false;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--paired-only" -> pairedOnly = Boolean.parseBoolean(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                case "--iterations" -> iterations = Integer.parseInt(args[i + 1]);
                case "--time" -> seconds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(out);
        Instant started = Instant.now();
        Map<String, String> machine;
        try (RedisServer redis = BenchRedis.start()) {
            machine = Machine.describe(redis);
        }
        if (pairedOnly) {
            StringBuilder md = new StringBuilder();
            md.append("<!-- written by JmhSuite --paired-only on ")
                    .append(Instant.now())
                    .append(" -->\n\n| Machine and versions | |\n|---|---|\n");
            machine.forEach(
                    (k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
            pairedSection(md, PairedWrites.run(PAIRED_ROUNDS, PAIRED_BLOCK));
            md.append("\nLoad average at end: ").append(Machine.loadAverage()).append('\n');
            Files.writeString(out.resolve("summary-paired.md"), md, StandardCharsets.UTF_8);
            System.out.println(md);
            System.out.println("wrote " + out.resolve("summary-paired.md"));
            return;
        }
        List<RunResult> fenced1 =
                run(
                        options(
                                FencedWriteBenchmark.class,
                                1,
                                warmup,
                                iterations,
                                seconds,
                                out,
                                "fenced-t1"));
        List<RunResult> fenced2 =
                run(
                        options(
                                FencedWriteBenchmark.class,
                                2,
                                warmup,
                                iterations,
                                seconds,
                                out,
                                "fenced-t2"));
        List<RunResult> cycle =
                run(
                        options(
                                AcquireReleaseBenchmark.class,
                                1,
                                warmup,
                                iterations,
                                seconds,
                                out,
                                "acquire-release"));
        List<RunResult> leaderOnly =
                run(
                        options(
                                LeaderOnlyBenchmark.class,
                                1,
                                warmup,
                                iterations,
                                seconds,
                                out,
                                "leader-only"));

        List<String> paired = PairedWrites.run(PAIRED_ROUNDS, PAIRED_BLOCK);

        StringBuilder md = new StringBuilder();
        md.append("<!-- written by JmhSuite on ").append(Instant.now()).append(" -->\n\n");
        md.append("| Machine and versions | |\n|---|---|\n");
        machine.forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        md.append(
                String.format(
                        "| JMH | 1.37, 1 fork, %d × %d s warm-up, %d × %d s measurement, took %d min, load average at end %s |%n%n",
                        warmup,
                        seconds,
                        iterations,
                        seconds,
                        Duration.between(started, Instant.now()).toMinutes(),
                        Machine.loadAverage()));

        md.append("#### Fenced against plain writes (same template, same connection)\n\n");
        md.append(
                "| Operation | 1 thread ops/s | µs/op | 2 threads ops/s | µs/op |\n|---|---|---|---|---|\n");
        Map<String, double[]> t1 = scores(fenced1);
        Map<String, double[]> t2 = scores(fenced2);
        for (String op : List.of("ping", "plainSet", "fencedSet", "plainHSet", "fencedHSet")) {
            md.append(
                    String.format(
                            "| %s | %s ± %s | %.1f | %s ± %s | %.1f |%n",
                            op,
                            ops(t1.get(op)[0]),
                            ops(t1.get(op)[1]),
                            1e6 / t1.get(op)[0],
                            ops(t2.get(op)[0]),
                            ops(t2.get(op)[1]),
                            2e6 / t2.get(op)[0]));
        }
        md.append("\n| Ratio | 1 thread | 2 threads |\n|---|---|---|\n");
        md.append(ratioRow("fenced SET ÷ plain SET", t1, t2, "fencedSet", "plainSet"));
        md.append(ratioRow("fenced HSET ÷ plain HSET", t1, t2, "fencedHSet", "plainHSet"));
        md.append(ratioRow("plain SET ÷ PING", t1, t2, "plainSet", "ping"));
        md.append(ratioRow("fenced SET ÷ PING", t1, t2, "fencedSet", "ping"));

        pairedSection(md, paired);

        md.append(
                "\n#### Acquire + release\n\n| Benchmark | releaseNotifications | µs/op |\n|---|---|---|\n");
        for (RunResult result : cycle) {
            md.append(
                    String.format(
                            "| %s | %s | %.1f ± %.1f |%n",
                            shortName(result),
                            result.getParams().getParam("releaseNotifications"),
                            result.getPrimaryResult().getScore(),
                            result.getPrimaryResult().getScoreError()));
        }

        md.append("\n#### @LeaderOnly interception\n\n| Benchmark | ns/op |\n|---|---|\n");
        for (RunResult result : leaderOnly) {
            md.append(
                    String.format(
                            "| %s | %.1f ± %.1f |%n",
                            shortName(result),
                            result.getPrimaryResult().getScore(),
                            result.getPrimaryResult().getScoreError()));
        }
        Files.writeString(out.resolve("summary.md"), md, StandardCharsets.UTF_8);
        System.out.println(md);
        System.out.println("wrote " + out.resolve("summary.md"));
    }

    /** Appends the fenced against plain writes measured in alternation ({@link PairedWrites}). */
    private static void pairedSection(StringBuilder md, List<String> paired) {
        md.append(
                "\n#### Fenced against plain writes, measured in alternation\n\n"
                        + "Rounds of "
                        + PAIRED_BLOCK
                        + " plain and "
                        + PAIRED_BLOCK
                        + " fenced writes (order alternating), "
                        + PAIRED_ROUNDS
                        + " rounds after 50 warm-up rounds; ratio = fenced ÷ plain throughput per"
                        + " round. Time per write is wall time ÷ writes × threads.\n\n");
        md.append(
                "| Write | Threads | plain, per write (median) | fenced, per write (median) |"
                        + " fenced ÷ plain throughput (median) | interquartile range |\n");
        md.append("|---|---|---|---|---|---|\n");
        for (String row : paired) {
            md.append(row.startsWith("|") ? "" : "\n").append(row).append('\n');
        }
    }

    private static ChainedOptionsBuilder options(
            Class<?> benchmark,
            int threads,
            int warmup,
            int iterations,
            int seconds,
            Path out,
            String file) {
        return new OptionsBuilder()
                .include(benchmark.getName().replace(".", "\\.") + "\\.")
                .threads(threads)
                .forks(1)
                .warmupIterations(warmup)
                .warmupTime(TimeValue.seconds(seconds))
                .measurementIterations(iterations)
                .measurementTime(TimeValue.seconds(seconds))
                .jvmArgsAppend("-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
                .resultFormat(ResultFormatType.JSON)
                .result(out.resolve(file + ".json").toString());
    }

    private static List<RunResult> run(ChainedOptionsBuilder options) throws Exception {
        return new ArrayList<>(new Runner(options.build()).run());
    }

    private static Map<String, double[]> scores(Collection<RunResult> results) {
        Map<String, double[]> scores = new HashMap<>();
        for (RunResult result : results) {
            scores.put(
                    shortName(result),
                    new double[] {
                        result.getPrimaryResult().getScore(),
                        result.getPrimaryResult().getScoreError()
                    });
        }
        return scores;
    }

    private static String ratioRow(
            String label, Map<String, double[]> t1, Map<String, double[]> t2, String a, String b) {
        return String.format(
                "| %s | %.2f | %.2f |%n",
                label, t1.get(a)[0] / t1.get(b)[0], t2.get(a)[0] / t2.get(b)[0]);
    }

    private static String shortName(RunResult result) {
        String name = result.getParams().getBenchmark();
        return name.substring(name.lastIndexOf('.') + 1);
    }

    private static String ops(double value) {
        return String.format("%,.0f", value);
    }
}
