package io.redlease.boot.autoconfigure;

import io.redlease.boot.autoconfigure.ListenerContainers.Registry;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Kafka's listener containers for {@link ListenerContainers}: the registry lookup (refusing a
 * container of a container group) and the warm-up's metadata round trip.
 */
final class KafkaContainers {

    private KafkaContainers() {}

    /** How long the warm-up waits for the broker's metadata. */
    private static final java.time.Duration METADATA_TIMEOUT = java.time.Duration.ofSeconds(10);

    static boolean owns(SmartLifecycle container) {
        return container
                instanceof
                org.springframework.kafka.listener.AbstractMessageListenerContainer<?, ?>;
    }

    /**
     * Returns a metadata round trip through a consumer of the container's consumer factory, closed
     * again; null if the factory cannot be read. The container creates a consumer of its own when
     * it starts (the client shares no connection between consumers), so what the warm-up does ahead
     * of the election is run the client once (its classes loaded, the broker's address and the
     * topics' metadata checked). The consumer is in a group of its own ({@code <group>-warm-up})
     * and never subscribes, joins or commits.
     */
    static @Nullable Runnable warmUp(SmartLifecycle container) {
        org.springframework.kafka.listener.AbstractMessageListenerContainer<?, ?> kafka =
                (org.springframework.kafka.listener.AbstractMessageListenerContainer<?, ?>)
                        container;
        // The container keeps its consumer factory in a protected field, with no accessor.
        Object factory;
        try {
            factory =
                    new org.springframework.beans.DirectFieldAccessor(kafka)
                            .getPropertyValue("consumerFactory");
        } catch (org.springframework.beans.BeansException ex) {
            return null;
        }
        if (!(factory instanceof org.springframework.kafka.core.ConsumerFactory<?, ?> consumers)) {
            return null;
        }
        String group = kafka.getGroupId();
        String[] topics = kafka.getContainerProperties().getTopics();
        return () -> {
            org.apache.kafka.clients.consumer.Consumer<?, ?> consumer =
                    consumers.createConsumer(
                            group == null ? null : group + "-warm-up", null, "-warm-up");
            try {
                if (topics == null || topics.length == 0) {
                    consumer.listTopics(METADATA_TIMEOUT);
                } else {
                    for (String topic : topics) {
                        consumer.partitionsFor(topic, METADATA_TIMEOUT);
                    }
                }
            } finally {
                // Nothing to commit or leave; do not wait for a broker that does not answer.
                close(consumer);
            }
        };
    }

    /** Closes at once; {@code close(Duration)} is deprecated in 4.1 but in every 4.x client. */
    @SuppressWarnings("deprecation")
    private static void close(org.apache.kafka.clients.consumer.Consumer<?, ?> consumer) {
        consumer.close(java.time.Duration.ZERO);
    }

    /**
     * Refuses a container in a container group ({@code @KafkaListener(containerGroup = ...)}): the
     * group is a {@code Lifecycle} bean whose {@code start()}, called by an explicit {@code
     * context.start()} or by a {@code ContainerGroupSequencer}, starts its containers on every
     * instance, leader or not.
     */
    static void checkGroup(
            ListableBeanFactory beanFactory,
            String id,
            org.springframework.kafka.listener.MessageListenerContainer container) {
        beanFactory
                .getBeansOfType(
                        org.springframework.kafka.listener.ContainerGroup.class, false, false)
                .forEach(
                        (name, group) -> {
                            if (group.contains(container)) {
                                throw new IllegalStateException(
                                        "redlease: the Kafka listener container '"
                                                + id
                                                + "' is in the container group '"
                                                + group.getName()
                                                + "' (bean '"
                                                + name
                                                + "'), whose start() starts it on every"
                                                + " instance, leader or not: an explicit"
                                                + " context.start() does, and so does a"
                                                + " ContainerGroupSequencer. Remove"
                                                + " containerGroup from its @KafkaListener;"
                                                + " redlease starts it when this instance is"
                                                + " elected");
                            }
                        });
    }

    static void add(ListableBeanFactory beanFactory, List<Registry> registries) {
        ListenerContainers.addEach(
                beanFactory,
                org.springframework.kafka.config.KafkaListenerEndpointRegistry.class,
                registries,
                (registry, id) -> {
                    org.springframework.kafka.listener.MessageListenerContainer container =
                            registry.getListenerContainer(id);
                    if (container != null) {
                        checkGroup(beanFactory, id, container);
                    }
                    return container;
                },
                (registry, name) -> registry.setAlwaysStartAfterRefresh(false));
    }
}
