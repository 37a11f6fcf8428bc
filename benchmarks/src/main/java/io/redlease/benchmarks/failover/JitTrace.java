package io.redlease.benchmarks.failover;

import io.redlease.benchmarks.contenders.Contestant;
import io.redlease.benchmarks.support.Summary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JIT compiler's log of each graceful child JVM ({@code -Xlog:jit+compilation=debug}, decorated
 * with {@code timenanos}: the clock of {@link System#nanoTime()}, shared by the processes of one
 * host): which hand-offs had a method compilation begin in either JVM of the pair around their
 * start. On two cores a compiler thread competes for the cores with the threads that carry the
 * hand-off (the old leader's release, Redis, the successor's acquire).
 *
 * <p>The window is the same for every trial (from {@link #LEAD_NANOS} before the stop to {@link
 * #AFTER_NANOS} after it), so a slow trial is not more likely to count as compiling only because it
 * lasted longer; next to the count among the slowest trials is the count chance alone would give.
 */
final class JitTrace {

    /** How long before a hand-off's start a compilation that began counts: it is still running. */
    static final long LEAD_NANOS = 5_000_000;

    /** How long after a hand-off's start a compilation that began counts: before most end. */
    static final long AFTER_NANOS = 3_000_000;

    private static final Pattern COMPILE =
            Pattern.compile("\\[(\\d+)ns\\]\\s+\\d+\\s+[ %sbn!]*\\d\\s+\\S+::\\S+");

    private final Path logDir;

    private final Map<Contestant, List<String>> labels = new ConcurrentHashMap<>();

    JitTrace(Path logDir) {
        this.logDir = logDir;
    }

    /**
     * Splits a traced run again from its files: {@code JitTrace <trials.csv> <logs directory>} (the
     * run's {@code logs/jit-graceful-<contestant>-<a|b>.log}); prints the table.
     */
    public static void main(String[] args) throws IOException {
        JitTrace trace = new JitTrace(Path.of(args[1]));
        List<Trial> trials = new ArrayList<>();
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            trials.add(
                    new Trial(
                            Trial.Scenario.valueOf(cells[0].toUpperCase(Locale.ROOT)),
                            Contestant.of(cells[1]),
                            Integer.parseInt(cells[2]),
                            Double.parseDouble(cells[3]),
                            Double.parseDouble(cells[4]),
                            Long.parseLong(cells[5]),
                            cells[6]));
        }
        List<Contestant> contestants =
                trials.stream().map(Trial::contestant).distinct().sorted().toList();
        for (Contestant contestant : contestants) {
            for (String suffix : List.of("a", "b")) {
                trace.jvmArgs(contestant, "graceful-" + contestant.id() + "-" + suffix);
            }
        }
        StringBuilder md = new StringBuilder();
        trace.append(md, contestants, trials);
        System.out.print(md);
    }

    /** The JVM options that make a child JVM write its compilation log for this trace. */
    List<String> jvmArgs(Contestant contestant, String label) {
        labels.computeIfAbsent(contestant, c -> new ArrayList<>()).add(label);
        return List.of(
                "-Xlog:jit+compilation=debug:file="
                        + logDir.resolve("jit-" + label + ".log")
                        + ":timenanos");
    }

    /** The start of every compilation in the contestant's JVMs, in nanoTime, sorted. */
    long[] compilations(Contestant contestant) {
        List<Long> starts = new ArrayList<>();
        for (String label : labels.getOrDefault(contestant, List.of())) {
            Path log = logDir.resolve("jit-" + label + ".log");
            try {
                for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                    Matcher matcher = COMPILE.matcher(line);
                    if (matcher.find()
                            && !line.contains("made not entrant")
                            && !line.contains("(native)")) {
                        starts.add(Long.parseLong(matcher.group(1)));
                    }
                }
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        long[] sorted = starts.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    /** Whether a compilation began in the window around the trial's start. */
    static boolean compiledDuring(long[] compilations, Trial trial) {
        long from = trial.startedNanos() - LEAD_NANOS;
        long to = trial.startedNanos() + AFTER_NANOS;
        int at = Arrays.binarySearch(compilations, from);
        int index = at >= 0 ? at : -at - 1;
        return index < compilations.length && compilations[index] <= to;
    }

    /** Appends the graceful hand-offs split by whether the JIT compiled as they began. */
    void append(StringBuilder md, List<Contestant> contestants, List<Trial> trials) {
        md.append("#### Graceful hand-off and the JIT compiler (compilation logs attached)\n\n");
        md.append(
                "A trial counts as compiling when a method compilation began in either JVM of the"
                        + " pair from 5 ms before the stop to 3 ms after it.\n\n");
        md.append(
                "| Contestant | trials without a compilation: n, p50 / p95 / max | trials with"
                        + " one: n, p50 / p95 / max | of the slowest 5 %, compiling (by chance"
                        + " alone) |\n");
        md.append("|---|---|---|---|\n");
        for (Contestant contestant : contestants) {
            long[] compilations = compilations(contestant);
            List<Trial> ok =
                    trials.stream()
                            .filter(t -> t.contestant() == contestant && t.ok())
                            .filter(t -> t.scenario() == Trial.Scenario.GRACEFUL)
                            .toList();
            List<Double> quiet = new ArrayList<>();
            List<Double> compiling = new ArrayList<>();
            for (Trial trial : ok) {
                (compiledDuring(compilations, trial) ? compiling : quiet).add(trial.latencyMs());
            }
            List<Trial> slowest =
                    ok.stream()
                            .sorted((a, b) -> Double.compare(b.latencyMs(), a.latencyMs()))
                            .limit(Math.max(1, ok.size() / 20))
                            .toList();
            long slowCompiling =
                    slowest.stream().filter(t -> compiledDuring(compilations, t)).count();
            double byChance =
                    ok.isEmpty() ? 0 : slowest.size() * (double) compiling.size() / ok.size();
            md.append(
                    String.format(
                            "| %s | %s | %s | %d of %d (%.1f) |%n",
                            contestant.label(),
                            cell(quiet),
                            cell(compiling),
                            slowCompiling,
                            slowest.size(),
                            byChance));
        }
        md.append('\n');
    }

    private static String cell(List<Double> values) {
        if (values.isEmpty()) {
            return "0";
        }
        Summary summary = Summary.of(values);
        return values.size()
                + ", "
                + Summary.millis(summary.p50())
                + " / "
                + Summary.millis(summary.p95())
                + " / "
                + Summary.millis(summary.max());
    }
}
