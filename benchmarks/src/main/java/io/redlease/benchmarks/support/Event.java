package io.redlease.benchmarks.support;

import org.jspecify.annotations.Nullable;

/**
 * One machine-readable line a child JVM printed: {@code @@ <kind> <name> <nanoTime> [detail]}.
 *
 * <p>{@code nanos} is the child's {@link System#nanoTime()} at the event. On Linux that is {@code
 * CLOCK_MONOTONIC}, one clock for every process of the machine, so times of different children and
 * of the parent can be subtracted.
 *
 * @param pid the child's process id
 * @param kind what happened, e.g. {@code ELECTED}
 * @param name the election the event is about, {@code -} if none
 * @param nanos when it happened
 * @param detail the rest of the line, possibly empty
 */
public record Event(long pid, String kind, String name, long nanos, String detail) {

    /** The prefix that marks an event line on a child's standard output. */
    public static final String PREFIX = "@@ ";

    /** Parses an event line, or returns null for any other line. */
    public static @Nullable Event parse(long pid, String line) {
        if (!line.startsWith(PREFIX)) {
            return null;
        }
        String[] parts = line.substring(PREFIX.length()).split(" ", 4);
        if (parts.length < 3) {
            return null;
        }
        return new Event(
                pid,
                parts[0],
                parts[1],
                Long.parseLong(parts[2]),
                parts.length > 3 ? parts[3] : "");
    }

    /** Formats an event line as a child prints it. */
    public static String format(String kind, String name, long nanos, String detail) {
        return PREFIX + kind + " " + name + " " + nanos + (detail.isEmpty() ? "" : " " + detail);
    }
}
