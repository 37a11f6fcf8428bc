package io.redlease.test;

import java.time.Duration;

/**
 * The factor every timing bound of the tests is multiplied by: {@code -Dredlease.test.timeScale}
 * (default 1). Raise it on a slow or crowded machine (for example 2 on a CI runner shared with
 * other builds) so that a bound meant as a margin for scheduling does not fail a correct run; it
 * never shortens a bound below what the test states.
 *
 * <p>It scales waits and margins (how long to wait for a leader, for a server to start, the slack
 * over TTL + acquire interval), never the timings under test (TTLs, intervals, fault lengths).
 */
public final class TestTimeScale {

    /** The system property that sets the factor. */
    public static final String PROPERTY = "redlease.test.timeScale";

    private static final double FACTOR = parse(System.getProperty(PROPERTY));

    private TestTimeScale() {}

    /** Returns the factor: 1 unless {@code -Dredlease.test.timeScale} says otherwise. */
    public static double factor() {
        return FACTOR;
    }

    /** Returns {@code bound} multiplied by the factor. */
    public static Duration scaled(Duration bound) {
        return FACTOR == 1 ? bound : Duration.ofNanos(Math.round(bound.toNanos() * FACTOR));
    }

    static double parse(String value) {
        if (value == null || value.isBlank()) {
            return 1;
        }
        double factor;
        try {
            factor = Double.parseDouble(value.trim());
        } catch (NumberFormatException ex) {
            throw new IllegalArgumentException(
                    PROPERTY + " must be a number at least 1, got '" + value + "'", ex);
        }
        if (!(factor >= 1) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException(
                    PROPERTY + " must be a number at least 1, got '" + value + "'");
        }
        return factor;
    }
}
