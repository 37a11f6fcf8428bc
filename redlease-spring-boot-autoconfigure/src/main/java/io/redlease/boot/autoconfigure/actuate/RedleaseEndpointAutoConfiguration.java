package io.redlease.boot.autoconfigure.actuate;

import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.scheduling.SlotJobs;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** Auto-configuration of the {@code redlease} actuator endpoint, when it is available. */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnClass({ConditionalOnAvailableEndpoint.class, RedleaseEndpoint.class})
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@ConditionalOnBean(Elections.class)
@ConditionalOnAvailableEndpoint(RedleaseEndpoint.class)
public final class RedleaseEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RedleaseEndpoint redleaseEndpoint(
            Elections elections,
            ObjectProvider<SlotJobs> slotJobs,
            ObjectProvider<LeaderLifecycles> lifecycles) {
        return new RedleaseEndpoint(
                elections, slotJobs.getIfAvailable(), lifecycles.getIfAvailable());
    }
}
