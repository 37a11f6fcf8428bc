package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pure timing rules of the run loop (Go: TestJitter_ShortensByAtMostTenPercent). */
class PacingTests {

    @Test
    void jitterShortensByAtMostTenPercent() {
        long interval = Duration.ofMillis(100).toNanos();
        long shortest = interval;
        for (int i = 0; i < 10_000; i++) {
            long delay = Pacing.jitter(interval);
            assertThat(delay).isBetween(Duration.ofMillis(90).toNanos(), interval);
            shortest = Math.min(shortest, delay);
        }
        // The distribution actually reaches below 99 ms: jitter is applied, not a constant.
        assertThat(shortest).isLessThan(Duration.ofMillis(99).toNanos());
    }

    @Test
    void jitterOfTinyDelaysStaysPositive() {
        assertThat(Pacing.jitter(9)).isEqualTo(9);
        assertThat(Pacing.jitter(10)).isBetween(9L, 10L);
    }
}
