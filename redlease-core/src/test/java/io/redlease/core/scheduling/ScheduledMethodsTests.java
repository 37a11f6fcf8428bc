package io.redlease.core.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.scheduling.config.FixedRateTask;
import org.springframework.scheduling.support.ScheduledMethodRunnable;

/** Recognising the method a Spring task runs, which once-per-slot scheduling depends on. */
class ScheduledMethodsTests {

    public void job() {}

    @Test
    void theMethodInsideSpringsTaskIsFound() throws Exception {
        ScheduledMethodRunnable method = new ScheduledMethodRunnable(this, "job");
        FixedRateTask task =
                new FixedRateTask(method, java.time.Duration.ofSeconds(1), java.time.Duration.ZERO);
        assertThat(task.getRunnable()).isNotSameAs(method);
        assertThat(ScheduledMethods.of(task.getRunnable())).isSameAs(method);
        assertThat(ScheduledMethods.of(method)).isSameAs(method);
        assertThat(ScheduledMethods.of(() -> {})).isNull();
    }

    @Test
    void aNativeImageMayReadTheWrappersField() throws Exception {
        RuntimeHints hints = new RuntimeHints();
        new SchedulingRuntimeHints().registerHints(hints, getClass().getClassLoader());
        assertThat(
                        RuntimeHintsPredicates.reflection()
                                .onFieldAccess(
                                        Class.forName(ScheduledMethods.WRAPPER)
                                                .getDeclaredField("runnable")))
                .accepts(hints);
    }
}
