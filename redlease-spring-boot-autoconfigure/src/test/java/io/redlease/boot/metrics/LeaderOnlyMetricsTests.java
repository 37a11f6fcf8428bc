package io.redlease.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlease.core.annotation.LeaderOnlySkipListener.MethodRef;
import io.redlease.core.annotation.LeaderOnlySkipListener.Reason;
import java.lang.reflect.Method;
import org.junit.jupiter.api.Test;

/** The counter of skipped {@code @LeaderOnly} calls. */
class LeaderOnlyMetricsTests {

    static class Reports {

        public void build() {}
    }

    private static MethodRef build() throws NoSuchMethodException {
        Method method = Reports.class.getMethod("build");
        return new MethodRef("{reports}", Reports.class, method);
    }

    private static Counter counter(MeterRegistry registry) {
        return registry.find(LeaderOnlyMetrics.SKIPPED)
                .tag(LeaderOnlyMetrics.TAG_NAME, "{reports}")
                .tag(LeaderOnlyMetrics.TAG_METHOD, "Reports.build")
                .counter();
    }

    @Test
    void eachAdvisedMethodIsRegisteredAtZeroWithADescription() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        LeaderOnlyMetrics metrics = new LeaderOnlyMetrics();
        metrics.bindTo(registry);
        metrics.onAdvised(build());
        assertThat(counter(registry)).isNotNull();
        assertThat(counter(registry).count()).isZero();
        assertThat(counter(registry).getId().getDescription()).isNotBlank();
    }

    @Test
    void methodsAdvisedBeforeTheRegistryIsBoundAreRegisteredWhenItIs() throws Exception {
        LeaderOnlyMetrics metrics = new LeaderOnlyMetrics();
        metrics.onAdvised(build());
        MeterRegistry registry = new SimpleMeterRegistry();
        metrics.bindTo(registry);
        assertThat(counter(registry)).isNotNull();
    }

    @Test
    void eachSkippedCallIsCountedInEveryRegistry() throws Exception {
        MeterRegistry first = new SimpleMeterRegistry();
        MeterRegistry second = new SimpleMeterRegistry();
        LeaderOnlyMetrics metrics = new LeaderOnlyMetrics();
        metrics.bindTo(first);
        metrics.bindTo(second);
        metrics.onSkipped(build(), Reason.NOT_LEADER);
        metrics.onSkipped(build(), Reason.TERM_ENDED);
        assertThat(counter(first).count()).isEqualTo(2);
        assertThat(counter(second).count()).isEqualTo(2);
        assertThat(first.find(LeaderOnlyMetrics.SKIPPED).counters()).hasSize(1);
    }
}
