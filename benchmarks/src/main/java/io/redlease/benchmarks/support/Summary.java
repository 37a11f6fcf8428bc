package io.redlease.benchmarks.support;

import java.util.Arrays;
import java.util.Collection;

/**
 * Order statistics of a sample, in the sample's unit. Percentiles are nearest-rank: the smallest
 * value with at least p % of the sample at or below it; with 30 values p99 is the maximum and p95
 * the second largest.
 *
 * @param count how many values
 * @param min the smallest
 * @param p50 the median (nearest rank)
 * @param p95 the 95th percentile
 * @param p99 the 99th percentile
 * @param max the largest
 * @param mean the arithmetic mean
 */
public record Summary(
        int count, double min, double p50, double p95, double p99, double max, double mean) {

    /** Summarises the values; an empty sample gives NaN everywhere. */
    public static Summary of(Collection<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (sorted.length == 0) {
            return new Summary(
                    0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        return new Summary(
                sorted.length,
                sorted[0],
                rank(sorted, 50),
                rank(sorted, 95),
                rank(sorted, 99),
                sorted[sorted.length - 1],
                Arrays.stream(sorted).average().orElse(Double.NaN));
    }

    private static double rank(double[] sorted, double percent) {
        int rank = (int) Math.ceil(percent / 100 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    /** Formats a duration in milliseconds with a unit that keeps 3 significant digits. */
    public static String millis(double ms) {
        if (Double.isNaN(ms)) {
            return "–";
        }
        if (ms >= 10_000) {
            return String.format("%.1f s", ms / 1000);
        }
        if (ms >= 1000) {
            return String.format("%.2f s", ms / 1000);
        }
        if (ms >= 100) {
            return String.format("%.0f ms", ms);
        }
        if (ms >= 10) {
            return String.format("%.1f ms", ms);
        }
        if (ms >= 1) {
            return String.format("%.2f ms", ms);
        }
        return String.format("%.0f µs", ms * 1000);
    }
}
