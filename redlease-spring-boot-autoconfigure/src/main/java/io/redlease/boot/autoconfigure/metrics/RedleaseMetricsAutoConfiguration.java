package io.redlease.boot.autoconfigure.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlease.boot.autoconfigure.ElectorCustomizer;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.metrics.LeaderOnlyMetrics;
import io.redlease.boot.metrics.PartitionMetrics;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.boot.metrics.SlotMetrics;
import io.redlease.core.Elections;
import io.redlease.core.scheduling.SlotJobs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the redlease Micrometer meters ({@link RedleaseMetrics}), when Micrometer
 * is on the classpath.
 */
@AutoConfiguration(
        before = RedleaseAutoConfiguration.class,
        afterName =
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({MeterRegistry.class, RedleaseMetrics.class})
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
public final class RedleaseMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RedleaseMetrics redleaseMetrics() {
        return new RedleaseMetrics();
    }

    /** Meters of once-per-slot jobs, when {@code @LeaderOnly} is applied. */
    @Bean
    MeterBinder redleaseSlotMetrics(ObjectProvider<SlotJobs> jobs) {
        return registry -> jobs.ifAvailable(found -> new SlotMetrics(found).bindTo(registry));
    }

    /** The counter of {@code @LeaderOnly} calls skipped because this instance did not lead. */
    @Bean
    LeaderOnlyMetrics redleaseLeaderOnlyMetrics() {
        return new LeaderOnlyMetrics();
    }

    /** Meters of partitioned elections, counted from their events. */
    @Bean
    PartitionMetrics redleasePartitionMetrics(ObjectProvider<Elections> elections) {
        return new PartitionMetrics(elections::getIfAvailable);
    }

    @Bean
    ElectorCustomizer redleaseMetricsCustomizer(RedleaseMetrics metrics) {
        return (id, builder) -> builder.observer(metrics.observer(builder.name()));
    }

    /** The lease time to live of every election, for alerts that compare times with it. */
    @Bean
    SmartInitializingSingleton redleaseLeaseTtlMetrics(
            RedleaseMetrics metrics, ObjectProvider<Elections> elections) {
        return () -> elections.ifAvailable(found -> found.asMap().values().forEach(metrics::lease));
    }
}
