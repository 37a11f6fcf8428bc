package io.redlease.reliability;

import java.util.Random;
import org.junit.jupiter.api.TestInfo;

/**
 * Seeded randomness for the suite: the seed comes from the system property {@value #PROPERTY} when
 * set, else from the clock, and is printed so any run can be repeated.
 */
final class Seeds {

    static final String PROPERTY = "redlease.seed";

    private Seeds() {}

    /** Returns a random generator for the test, printing its seed. */
    static Random random(TestInfo info) {
        long seed = Long.getLong(PROPERTY, System.nanoTime() ^ System.currentTimeMillis());
        String test =
                info.getTestClass().map(Class::getSimpleName).orElse("?")
                        + "."
                        + info.getTestMethod().map(m -> m.getName()).orElse("?");
        System.out.println(
                "[redlease-reliability] "
                        + test
                        + " seed="
                        + seed
                        + " (repeat with -D"
                        + PROPERTY
                        + "="
                        + seed
                        + ")");
        Figures.note(test + " seed=" + seed);
        return new Random(seed);
    }

    /** Returns whether the long soak tier is switched on ({@code -Psoak} or -Dredlease.soak). */
    static boolean soak() {
        return Boolean.getBoolean("redlease.soak");
    }
}
