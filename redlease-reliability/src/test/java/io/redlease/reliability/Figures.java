package io.redlease.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The figures the suite measures (durations per metric, counters), written to {@code
 * target/reliability-figures.txt} when the test JVM exits and printed to standard output.
 */
final class Figures {

    private static final Map<String, List<Long>> DURATIONS = new TreeMap<>();
    private static final Map<String, Long> COUNTERS = new TreeMap<>();
    private static final List<String> NOTES = new ArrayList<>();
    private static final AtomicBoolean HOOK = new AtomicBoolean();

    private Figures() {}

    static synchronized void duration(String metric, long nanos) {
        hook();
        DURATIONS.computeIfAbsent(metric, k -> new ArrayList<>()).add(nanos);
    }

    static synchronized void count(String counter, long n) {
        hook();
        COUNTERS.merge(counter, n, Long::sum);
    }

    static synchronized void note(String note) {
        hook();
        NOTES.add(note);
    }

    private static void hook() {
        if (HOOK.compareAndSet(false, true)) {
            Runtime.getRuntime().addShutdownHook(new Thread(Figures::write, "figures"));
        }
    }

    static synchronized String summary() {
        StringBuilder out = new StringBuilder();
        out.append("# redlease reliability figures\n\n## Counters\n");
        COUNTERS.forEach((k, v) -> out.append(k).append(" = ").append(v).append('\n'));
        out.append("\n## Durations (ms): n, p50, p99, max\n");
        DURATIONS.forEach(
                (k, v) -> {
                    List<Long> sorted = new ArrayList<>(v);
                    sorted.sort(null);
                    out.append(
                            String.format(
                                    "%s: n=%d p50=%.1f p99=%.1f max=%.1f%n",
                                    k,
                                    sorted.size(),
                                    ms(percentile(sorted, 50)),
                                    ms(percentile(sorted, 99)),
                                    ms(sorted.get(sorted.size() - 1))));
                });
        out.append("\n## Notes\n");
        NOTES.forEach(n -> out.append(n).append('\n'));
        return out.toString();
    }

    static long percentile(List<Long> sorted, int p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static double ms(long nanos) {
        return nanos / 1_000_000.0;
    }

    static String ms(Duration duration) {
        return String.format("%.1f ms", ms(duration.toNanos()));
    }

    private static void write() {
        String text = summary();
        System.out.println(text);
        String dir = System.getProperty("redlease.figures.dir", "target");
        try {
            Path file = Path.of(dir, "reliability-figures.txt");
            Files.createDirectories(file.getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
