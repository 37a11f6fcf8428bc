package io.redlease.boot.autoconfigure.observation;

import io.micrometer.observation.ObservationRegistry;
import io.redlease.boot.autoconfigure.ElectorCustomizer;
import io.redlease.boot.autoconfigure.LeaderOnlyAutoConfiguration;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.logging.LeaderOnlyLogCorrelation;
import io.redlease.boot.observation.ElectionObservationConvention;
import io.redlease.boot.observation.ElectionObservations;
import io.redlease.boot.observation.EngineTrafficPredicate;
import io.redlease.boot.observation.LeaderOnlyObservationConvention;
import io.redlease.boot.observation.ObservedLeaderOnlyRuns;
import io.redlease.core.Elections;
import io.redlease.core.annotation.LeaderOnly;
import org.slf4j.MDC;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of redlease's observations: leader-only runs and election transitions with the
 * application's {@link ObservationRegistry} ({@code redlease.observations.enabled}), the predicate
 * that keeps redlease's background Redis traffic out of its traces ({@code
 * redlease.observations.engine-traffic}), and the log correlation of leader-only runs (SLF4J's
 * MDC).
 */
@AutoConfiguration(
        after = {RedleaseAutoConfiguration.class, LeaderOnlyAutoConfiguration.class},
        afterName =
                "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@ConditionalOnClass(LeaderOnly.class)
@EnableConfigurationProperties(RedleaseObservationProperties.class)
public final class RedleaseObservationAutoConfiguration {

    @Bean
    @ConditionalOnClass(MDC.class)
    @ConditionalOnMissingBean
    LeaderOnlyLogCorrelation redleaseLeaderOnlyLogCorrelation() {
        return new LeaderOnlyLogCorrelation();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    static class Observations {

        @Bean
        @ConditionalOnBooleanProperty(name = "redlease.observations.enabled", matchIfMissing = true)
        ObservedLeaderOnlyRuns redleaseLeaderOnlyObservations(
                ObservationRegistry registry,
                ObjectProvider<LeaderOnlyObservationConvention> convention) {
            return new ObservedLeaderOnlyRuns(registry, convention.getIfUnique());
        }

        @Bean
        @ConditionalOnBooleanProperty(name = "redlease.observations.enabled", matchIfMissing = true)
        ElectorCustomizer redleaseElectionObservations(
                ObservationRegistry registry,
                ObjectProvider<ElectionObservationConvention> convention,
                ObjectProvider<Elections> elections) {
            ElectionObservations observations =
                    new ElectionObservations(registry, convention.getIfUnique());
            return (id, builder) -> {
                String name = builder.name();
                builder.observer(observations.observer(name, () -> instanceOf(elections, id)));
            };
        }

        @Bean
        @ConditionalOnClass(name = "io.lettuce.core.tracing.LettuceObservationContext")
        @ConditionalOnBooleanProperty(
                name = "redlease.observations.engine-traffic",
                havingValue = false,
                matchIfMissing = true)
        EngineTrafficPredicate redleaseEngineTrafficPredicate() {
            return new EngineTrafficPredicate();
        }

        private static String instanceOf(ObjectProvider<Elections> elections, String id) {
            try {
                Elections all = elections.getIfAvailable();
                return all != null ? all.get(id).instanceId() : null;
            } catch (RuntimeException ex) {
                return null; // a partition's elector, or an election being stopped
            }
        }
    }
}
