package io.redlease.benchmarks.failover;

import io.redlease.benchmarks.contenders.Contestant;
import io.redlease.benchmarks.support.Summary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Writes the failover chart as a self-contained SVG: one row per contestant and scenario on a
 * logarithmic time axis from 0.1 ms to 100 s, with every trial as a dot, the p50–p95 range as a
 * box, the median as a bar, p99 as a diamond and the lease TTL as a dashed mark.
 */
final class FailoverChart {

    private static final double MIN_MS = 0.1;

    private static final double MAX_MS = 100_000;

    private static final int WIDTH = 960;

    private static final int LEFT = 250;

    private static final int RIGHT = 30;

    private static final int ROW = 34;

    private static final int PANEL_GAP = 56;

    private static final int TOP = 56;

    private FailoverChart() {}

    /**
     * Re-renders the chart from a run's {@code trials.csv}: {@code FailoverChart <trials.csv>
     * <chart.svg> <subtitle>}.
     */
    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Map<Trial.Scenario, Map<Contestant, List<Double>>> values = new LinkedHashMap<>();
        Set<Contestant> seen = new LinkedHashSet<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            Trial.Scenario scenario = Trial.Scenario.valueOf(cells[0].toUpperCase(Locale.ROOT));
            Contestant contestant = Contestant.of(cells[1]);
            seen.add(contestant);
            double latency = Double.parseDouble(cells[3]);
            List<Double> sample =
                    values.computeIfAbsent(scenario, k -> new EnumMap<>(Contestant.class))
                            .computeIfAbsent(contestant, k -> new ArrayList<>());
            if (!Double.isNaN(latency)) {
                sample.add(latency);
            }
        }
        List<Contestant> order = new ArrayList<>(seen);
        order.sort(Comparator.naturalOrder());
        write(Path.of(args[1]), args.length > 2 ? args[2] : "", order, values);
    }

    static void write(
            Path file,
            String subtitle,
            List<Contestant> contestants,
            Map<Trial.Scenario, Map<Contestant, List<Double>>> values)
            throws IOException {
        StringBuilder svg = new StringBuilder();
        int panels = values.size();
        int height = TOP + panels * (contestants.size() * ROW + PANEL_GAP) + 50;
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                                + " viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial,"
                                + " sans-serif\" font-size=\"12\">%n",
                        WIDTH,
                        height,
                        WIDTH,
                        height));
        svg.append(
                String.format(
                        "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, height));
        text(svg, 20, 24, "Failover latency per contestant (log scale)", 16, "start", "bold");
        text(svg, 20, 42, subtitle, 11, "start", "normal");
        int y = TOP;
        for (Map.Entry<Trial.Scenario, Map<Contestant, List<Double>>> panel : values.entrySet()) {
            y = panel(svg, y, panel.getKey(), contestants, panel.getValue());
        }
        legend(svg, height - 22);
        svg.append("</svg>\n");
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, svg.toString(), StandardCharsets.UTF_8);
    }

    private static int panel(
            StringBuilder svg,
            int top,
            Trial.Scenario scenario,
            List<Contestant> contestants,
            Map<Contestant, List<Double>> values) {
        text(svg, 20, top + 14, scenario.title(), 13, "start", "bold");
        int plotTop = top + 24;
        int plotBottom = plotTop + contestants.size() * ROW;
        // Decade grid.
        for (double ms = MIN_MS; ms <= MAX_MS * 1.001; ms *= 10) {
            double x = x(ms);
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n",
                            x,
                            plotTop,
                            x,
                            plotBottom));
            text(svg, x, plotBottom + 15, tick(ms), 11, "middle", "normal");
        }
        int row = 0;
        for (Contestant contestant : contestants) {
            double cy = plotTop + row * ROW + ROW / 2.0;
            if (row % 2 == 0) {
                svg.append(
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\""
                                        + " fill=\"#f6f6f6\"/>%n",
                                LEFT,
                                cy - ROW / 2.0,
                                WIDTH - LEFT - RIGHT,
                                ROW));
            }
            text(svg, LEFT - 8, cy + 4, contestant.label(), 12, "end", "normal");
            List<Double> sample = values.get(contestant);
            if (scenario == Trial.Scenario.CRASH) {
                double tx = x(contestant.ttl().toMillis());
                svg.append(
                        String.format(
                                Locale.ROOT,
                                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\""
                                        + " stroke=\"#c0392b\" stroke-dasharray=\"3,2\""
                                        + " stroke-width=\"1.5\"/>%n",
                                tx,
                                cy - ROW / 2.0 + 2,
                                tx,
                                cy + ROW / 2.0 - 2));
            }
            if (sample == null || sample.isEmpty()) {
                text(svg, LEFT + 8, cy + 4, "not measured", 11, "start", "italic");
                row++;
                continue;
            }
            Summary s = Summary.of(sample);
            String color = color(contestant);
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>%n",
                            x(s.min()),
                            cy,
                            x(s.max()),
                            cy,
                            color));
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\""
                                    + " fill=\"%s\" fill-opacity=\"0.25\" stroke=\"%s\"/>%n",
                            x(s.p50()),
                            cy - 6,
                            Math.max(1, x(s.p95()) - x(s.p50())),
                            color,
                            color));
            int i = 0;
            for (double v : sample) {
                double jitter = ((i++ * 7) % 11 - 5) * 1.2;
                svg.append(
                        String.format(
                                Locale.ROOT,
                                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\""
                                        + " fill-opacity=\"0.55\"/>%n",
                                x(v),
                                cy + jitter,
                                color));
            }
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\""
                                    + " stroke-width=\"2.5\"/>%n",
                            x(s.p50()),
                            cy - 9,
                            x(s.p50()),
                            cy + 9));
            double px = x(s.p99());
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<path d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\" fill=\"black\"/>%n",
                            px,
                            cy - 5 - 9));
            String label = "p50 " + Summary.millis(s.p50()) + " · p99 " + Summary.millis(s.p99());
            boolean roomRight = x(s.max()) + 9 + 150 < WIDTH - RIGHT;
            text(
                    svg,
                    roomRight ? x(s.max()) + 9 : x(s.min()) - 9,
                    cy + 4,
                    label,
                    10,
                    roomRight ? "start" : "end",
                    "normal");
            row++;
        }
        return plotBottom + PANEL_GAP;
    }

    private static void legend(StringBuilder svg, int y) {
        int x = LEFT;
        svg.append(
                String.format("<circle cx=\"%d\" cy=\"%d\" r=\"2.5\" fill=\"#555\"/>%n", x, y - 4));
        text(svg, x + 8, y, "one trial", 11, "start", "normal");
        x += 80;
        svg.append(
                String.format(
                        "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"10\" fill=\"#555\""
                                + " fill-opacity=\"0.25\" stroke=\"#555\"/>%n",
                        x, y - 9));
        text(svg, x + 30, y, "p50–p95", 11, "start", "normal");
        x += 90;
        svg.append(
                String.format(
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\""
                                + " stroke-width=\"2.5\"/>%n",
                        x, y - 11, x, y + 1));
        text(svg, x + 8, y, "median", 11, "start", "normal");
        x += 70;
        svg.append(
                String.format(
                        "<path d=\"M%d %d l5 5 l-5 5 l-5 -5 z\" fill=\"black\"/>%n", x, y - 10));
        text(svg, x + 10, y, "p99", 11, "start", "normal");
        x += 55;
        svg.append(
                String.format(
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c0392b\""
                                + " stroke-dasharray=\"3,2\" stroke-width=\"1.5\"/>%n",
                        x, y - 11, x, y + 1));
        text(svg, x + 8, y, "lease TTL (crash)", 11, "start", "normal");
    }

    private static String color(Contestant contestant) {
        return switch (contestant) {
            case REDLEASE -> "#1f77b4";
            case REDLEASE_GO -> "#6baed6";
            case SPRING_INTEGRATION -> "#2ca02c";
            case SPRING_INTEGRATION_5S -> "#98df8a";
            case REDISSON -> "#d62728";
            case REDISSON_5S -> "#ff9896";
        };
    }

    private static double x(double ms) {
        double clamped = Math.max(MIN_MS, Math.min(MAX_MS, ms));
        double span = Math.log10(MAX_MS) - Math.log10(MIN_MS);
        return LEFT + (Math.log10(clamped) - Math.log10(MIN_MS)) / span * (WIDTH - LEFT - RIGHT);
    }

    private static String tick(double ms) {
        if (ms < 1) {
            return "0.1 ms";
        }
        if (ms < 1000) {
            return String.format(Locale.ROOT, "%.0f ms", ms);
        }
        return String.format(Locale.ROOT, "%.0f s", ms / 1000);
    }

    private static void text(
            StringBuilder svg,
            double x,
            double y,
            String content,
            int size,
            String anchor,
            String weight) {
        String style = weight.equals("italic") ? " font-style=\"italic\"" : "";
        String bold = weight.equals("bold") ? " font-weight=\"bold\"" : "";
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s%s>%s</text>%n",
                        x,
                        y,
                        size,
                        anchor,
                        bold,
                        style,
                        content.replace("&", "&amp;").replace("<", "&lt;")));
    }
}
