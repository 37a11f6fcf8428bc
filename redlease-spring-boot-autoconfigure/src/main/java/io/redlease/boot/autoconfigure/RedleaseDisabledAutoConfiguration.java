package io.redlease.boot.autoconfigure;

import io.redlease.boot.health.RedleaseDisabledHealthIndicator;
import io.redlease.core.ElectionDisabledException;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import java.util.Map;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.IgnoreErrorsBindHandler;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration for {@code redlease.enabled=false}: the application starts without leader
 * election and keeps the beans it injects, answering "disabled".
 *
 * <ul>
 *   <li>{@link Elections}: a registry without elections ({@link Elections#disabled}); asked for an
 *       elector or a partitioned election, it throws an {@link ElectionDisabledException} naming
 *       the switch.
 *   <li>{@link LeadershipContext}: this instance does not lead ({@code isLeader()} false, {@code
 *       token()}, {@code fencer()} and {@code leaderInfo()} empty, {@code resign()} a no-op);
 *       {@code requireFencer()} and {@code reactiveFencer()} fail with an {@link
 *       ElectionDisabledException} naming the switch, so no write claims a fence it does not have.
 * </ul>
 *
 * <p>There is no {@link Elector} bean: an injection point of that type fails startup with a report
 * that names the switch (inject {@code LeadershipContext}, or {@code ObjectProvider<Elector>} where
 * the code can do without). {@code @LeaderOnly} is not applied, so annotated methods run on every
 * instance; a warning at startup lists them. Likewise the leader-only lifecycle beans and the
 * listener containers of {@code redlease.lifecycle.listeners} start with the application on every
 * instance ({@link DisabledLeaderLifecycles}), with a warning that lists them. With Spring Boot's
 * health, the {@code redlease} (and, with {@code redlease.health.leader.enabled}, {@code
 * redleaseLeader}) indicators are UP with {@code enabled: false}, so health groups that name them
 * keep working; the actuator endpoint and discovery stay off.
 */
@AutoConfiguration
@ConditionalOnClass(Elector.class)
@ConditionalOnBooleanProperty(name = "redlease.enabled", havingValue = false)
public final class RedleaseDisabledAutoConfiguration {

    /** What a disabled registry and context say, in the exceptions they throw. */
    static final String REASON =
            "leader election is disabled (redlease.enabled=false), so no instance leads, no write"
                    + " can be fenced and @LeaderOnly methods run on every instance; remove"
                    + " redlease.enabled=false (or set it to true) to elect a leader";

    @Bean
    @ConditionalOnMissingBean
    Elections redleaseElections(Environment environment) {
        return Elections.disabled(REASON, environment.getProperty("redlease.instance-id"));
    }

    @Bean
    @ConditionalOnMissingBean
    LeadershipContext leadershipContext(Elections elections) {
        return new LeadershipContext(elections);
    }

    /**
     * Health indicators in place of the {@code redlease} and {@code redleaseLeader} ones, UP with
     * {@code enabled: false}, so that health groups that name them still resolve.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = "org.springframework.boot.health.contributor.AbstractHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("redlease")
    static class Health {

        @Bean
        @ConditionalOnMissingBean(name = "redleaseHealthIndicator")
        RedleaseDisabledHealthIndicator redleaseHealthIndicator() {
            return new RedleaseDisabledHealthIndicator(REASON);
        }

        @Bean
        @ConditionalOnBooleanProperty(name = "redlease.health.leader.enabled")
        @ConditionalOnMissingBean(name = "redleaseLeaderHealthIndicator")
        RedleaseDisabledHealthIndicator redleaseLeaderHealthIndicator() {
            return new RedleaseDisabledHealthIndicator(REASON);
        }
    }

    /** Starts the leader-only lifecycles and listener containers on every instance. */
    @Bean
    DisabledLeaderLifecycles redleaseDisabledLeaderLifecycles(
            Environment environment, ConfigurableListableBeanFactory beanFactory) {
        // Values that would fail binding are no concern of a switched-off election.
        RedleaseProperties properties =
                Binder.get(environment)
                        .bind(
                                "redlease",
                                Bindable.of(RedleaseProperties.class),
                                new IgnoreErrorsBindHandler())
                        .orElseGet(RedleaseProperties::new);
        // A child context's listener ids are its parent's (the same properties): the parent's
        // instance starts those containers, in the registry it has.
        boolean child =
                beanFactory.getParentBeanFactory() instanceof ListableBeanFactory parent
                        && BeanFactoryUtils.beanNamesForTypeIncludingAncestors(
                                                parent, DisabledLeaderLifecycles.class, true, false)
                                        .length
                                > 0;
        return new DisabledLeaderLifecycles(
                beanFactory,
                child ? Map.of() : DisabledLeaderLifecycles.listenerIds(properties),
                () ->
                        ListenerContainers.registries(
                                beanFactory,
                                RedleaseDisabledAutoConfiguration.class.getClassLoader()));
    }
}
