package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class TestTimeScaleTests {

    @Test
    void unsetOrBlankIsOne() {
        assertThat(TestTimeScale.parse(null)).isEqualTo(1);
        assertThat(TestTimeScale.parse(" ")).isEqualTo(1);
    }

    @Test
    void aFactorOfAtLeastOneIsTaken() {
        assertThat(TestTimeScale.parse("1")).isEqualTo(1);
        assertThat(TestTimeScale.parse(" 2.5 ")).isEqualTo(2.5);
    }

    @Test
    void anythingElseIsRefusedNamingTheProperty() {
        for (String bad : new String[] {"0.5", "0", "-1", "NaN", "Infinity", "fast"}) {
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> TestTimeScale.parse(bad))
                    .withMessage(
                            "redlease.test.timeScale must be a number at least 1, got '"
                                    + bad
                                    + "'");
        }
    }

    @Test
    void theBuildPassesTheFactorToTheTests() {
        // The root pom passes -Dredlease.test.timeScale (default 1) to every test JVM.
        assertThat(System.getProperty(TestTimeScale.PROPERTY)).isNotNull();
        assertThat(TestTimeScale.scaled(java.time.Duration.ofMillis(400)))
                .isEqualTo(
                        java.time.Duration.ofNanos(
                                Math.round(400_000_000 * TestTimeScale.factor())));
    }
}
