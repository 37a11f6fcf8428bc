package io.redlease.boot.autoconfigure.health;

import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.health.RedleaseLeaderHealthIndicator;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.scheduling.SlotJobs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code redlease} health contributor, when Boot's health is present.
 *
 * <p>It backs off when the application defines its own {@link RedleaseHealthIndicator}, or a bean
 * named {@code redleaseHealthIndicator} or {@code redleaseHealthContributor}.
 */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnClass({AbstractHealthIndicator.class, RedleaseHealthIndicator.class})
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@ConditionalOnBean(Elections.class)
@ConditionalOnEnabledHealthIndicator("redlease")
@EnableConfigurationProperties(RedleaseLeaderHealthProperties.class)
public final class RedleaseHealthContributorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(
            value = RedleaseHealthIndicator.class,
            name = {"redleaseHealthIndicator", "redleaseHealthContributor"})
    RedleaseHealthIndicator redleaseHealthIndicator(
            Elections elections,
            ObjectProvider<LeaderLifecycles> lifecycles,
            ObjectProvider<SlotJobs> slotJobs) {
        return new RedleaseHealthIndicator(
                elections, lifecycles.getIfAvailable(), slotJobs.getIfAvailable());
    }

    /**
     * The opt-in {@code redleaseLeader} indicator: whether this instance leads the election named
     * by {@code redlease.health.leader.election} (the main one by default). Meant for a health
     * group of its own, never for readiness or liveness.
     */
    @Bean
    @ConditionalOnBooleanProperty(name = "redlease.health.leader.enabled")
    @ConditionalOnMissingBean(name = "redleaseLeaderHealthIndicator")
    RedleaseLeaderHealthIndicator redleaseLeaderHealthIndicator(
            Elections elections, RedleaseLeaderHealthProperties properties) {
        String election = properties.getElection();
        if (!election.isEmpty() && elections.find(election).isEmpty()) {
            throw new InvalidConfigurationPropertyValueException(
                    "redlease.health.leader.election",
                    election,
                    "no election has this id; configured: "
                            + elections.ids()
                            + ". Set it to one of them, or leave it empty for the main election.");
        }
        return new RedleaseLeaderHealthIndicator(elections.get(election));
    }
}
