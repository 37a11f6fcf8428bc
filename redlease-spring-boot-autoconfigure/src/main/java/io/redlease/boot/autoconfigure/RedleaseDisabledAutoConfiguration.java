package io.redlease.boot.autoconfigure;

import io.redlease.core.ElectionDisabledException;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
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
 * instance ({@link DisabledLeaderLifecycles}), with a warning that lists them.
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

    /** Starts the leader-only lifecycles and listener containers on every instance. */
    @Bean
    DisabledLeaderLifecycles redleaseDisabledLeaderLifecycles(
            Environment environment, ConfigurableListableBeanFactory beanFactory) {
        RedleaseProperties properties =
                Binder.get(environment)
                        .bind("redlease", RedleaseProperties.class)
                        .orElseGet(RedleaseProperties::new);
        return new DisabledLeaderLifecycles(
                beanFactory,
                DisabledLeaderLifecycles.listenerIds(properties),
                () ->
                        ListenerContainers.registries(
                                beanFactory,
                                RedleaseDisabledAutoConfiguration.class.getClassLoader()));
    }
}
