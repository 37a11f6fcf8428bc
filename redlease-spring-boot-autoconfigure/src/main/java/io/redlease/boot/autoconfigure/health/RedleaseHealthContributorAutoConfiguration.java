package io.redlease.boot.autoconfigure.health;

import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
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
@ConditionalOnBean(Elections.class)
@ConditionalOnEnabledHealthIndicator("redlease")
public final class RedleaseHealthContributorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(
            value = RedleaseHealthIndicator.class,
            name = {"redleaseHealthIndicator", "redleaseHealthContributor"})
    RedleaseHealthIndicator redleaseHealthIndicator(
            Elections elections, ObjectProvider<LeaderLifecycles> lifecycles) {
        return new RedleaseHealthIndicator(elections, lifecycles.getIfAvailable());
    }
}
