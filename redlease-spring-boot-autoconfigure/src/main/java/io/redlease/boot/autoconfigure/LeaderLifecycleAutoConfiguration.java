package io.redlease.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.event.LeaderLifecycleFailedEvent;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.boot.metrics.LifecycleMetrics;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of leader-only lifecycles ({@link LeaderLifecycles}): beans whose class is
 * annotated {@code @LeaderOnly} and implements {@code Lifecycle}, and the RabbitMQ, Kafka and JMS
 * listener containers named in {@code redlease.lifecycle.listeners} (or {@code
 * redlease.elections.<id>.lifecycle.listeners}). They start when this instance is elected and stop
 * when the term ends; a graceful step-down releases the lease only after they stopped. Failures are
 * published as {@link LeaderLifecycleFailedEvent}s and, with Micrometer, counted.
 */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnClass(Elector.class)
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
public final class LeaderLifecycleAutoConfiguration {

    @Bean
    static LeaderOnlyLifecycleBeanPostProcessor redleaseLeaderOnlyLifecycleBeanPostProcessor() {
        return new LeaderOnlyLifecycleBeanPostProcessor();
    }

    @Bean
    static ListenerRegistryGuard redleaseListenerRegistryGuard() {
        return new ListenerRegistryGuard();
    }

    @Bean
    @ConditionalOnMissingBean
    LeaderLifecycles leaderLifecycles(
            ObjectProvider<Elections> elections,
            ObjectProvider<LeaderLifecycles.Listener> listeners) {
        return new LeaderLifecycles(elections::getObject, () -> listeners.orderedStream().toList());
    }

    @Bean
    ElectorCustomizer redleaseLifecycleCustomizer(LeaderLifecycles lifecycles) {
        return (id, builder) ->
                builder.observer(lifecycles.observer(id))
                        .beforeRelease(lifecycles.beforeRelease(id));
    }

    @Bean
    LeaderLifecycleRegistrar redleaseLifecycleRegistrar(
            LeaderOnlyLifecycleBeanPostProcessor beans,
            LeaderLifecycles lifecycles,
            ObjectProvider<Elections> elections,
            ObjectProvider<RedleaseProperties> properties,
            ListableBeanFactory beanFactory) {
        return new LeaderLifecycleRegistrar(
                beans,
                lifecycles,
                elections::getIfAvailable,
                properties.getIfAvailable(RedleaseProperties::new),
                () ->
                        ListenerContainers.registries(
                                beanFactory,
                                LeaderLifecycleAutoConfiguration.class.getClassLoader()),
                beanFactory instanceof ConfigurableListableBeanFactory configurable
                        ? configurable
                        : null);
    }

    @Bean
    LeaderLifecycles.Listener redleaseLifecycleEvents(ApplicationEventPublisher publisher) {
        return new LeaderLifecycles.Listener() {
            @Override
            public void onFailed(
                    String electionId,
                    Elector elector,
                    String member,
                    LeaderLifecycles.Action action,
                    Throwable error) {
                publisher.publishEvent(
                        new LeaderLifecycleFailedEvent(elector, electionId, member, action, error));
            }
        };
    }

    /**
     * Publishes Spring Integration's leader events for every election, when the application has a
     * {@code SmartLifecycleRoleController} (Spring Integration's {@code @EnableIntegration}
     * declares one): role {@code redlease.integration.role} ("leader") for the main election, the
     * id for a named one.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.integration.leader.event.OnGrantedEvent")
    static class Integration {

        /** Registers the roles once the singletons exist, if a role controller is among them. */
        @Bean
        SmartInitializingSingleton redleaseIntegrationRoles(
                LeaderLifecycles lifecycles,
                ObjectProvider<Elections> elections,
                ObjectProvider<RedleaseProperties> properties,
                ApplicationEventPublisher publisher,
                ListableBeanFactory beanFactory) {
            String role =
                    properties.getIfAvailable(RedleaseProperties::new).getIntegration().getRole();
            return () -> {
                if (beanFactory.getBeanNamesForType(
                                        org.springframework.integration.support
                                                .SmartLifecycleRoleController.class,
                                        false,
                                        false)
                                .length
                        > 0) {
                    elections.ifAvailable(
                            found ->
                                    IntegrationRole.registerAll(
                                            lifecycles, found, role, publisher, beanFactory));
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {

        @Bean
        LifecycleMetrics redleaseLifecycleMetrics() {
            return new LifecycleMetrics();
        }
    }
}
