package io.redlease.boot.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.ClassUtils;

/**
 * Finds listener containers by id in the endpoint registries on the class path: RabbitMQ's {@code
 * RabbitListenerEndpointRegistry}, Kafka's {@code KafkaListenerEndpointRegistry} and JMS's {@code
 * JmsListenerEndpointRegistry}. A registry class is touched only when it is present.
 */
final class ListenerContainers {

    /** One endpoint registry. */
    interface Registry {

        /** Returns the registry's simple class name, for messages. */
        String name();

        /** Returns the container with this id, or null. */
        @Nullable SmartLifecycle find(String id);

        /**
         * Keeps an explicit start of the registry (or of the context) from starting containers
         * whose {@code autoStartup} is false, as it otherwise does once the context was refreshed;
         * fails when the registry cannot be kept from it.
         */
        void hold();
    }

    private static void requireGuarded(Object registry, String name) {
        if (!ListenerRegistryGuard.guarded(registry)) {
            throw new IllegalStateException(
                    "redlease: the "
                            + name
                            + " was created before redlease could guard it, so an explicit"
                            + " start of the context or of the registry would start its"
                            + " leader-only listener containers on every instance. Do not create"
                            + " the registry from a BeanPostProcessor or a BeanFactoryPostProcessor");
        }
    }

    private ListenerContainers() {}

    /**
     * Returns what opens a listener container's broker connection ahead of its start: for a
     * RabbitMQ container, a connection of its connection factory, closed again (a caching
     * connection factory, Boot's default, keeps it open for the container); null for others.
     */
    static @Nullable Runnable warmUp(SmartLifecycle container, ClassLoader classLoader) {
        if (ClassUtils.isPresent(
                        "org.springframework.kafka.listener.AbstractMessageListenerContainer",
                        classLoader)
                && Kafka.owns(container)) {
            return Kafka.warmUp(container);
        }
        if (ClassUtils.isPresent(
                "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer",
                classLoader)) {
            return Rabbit.warmUp(container);
        }
        return null;
    }

    /** Returns the registries that are both on the class path and beans of the application. */
    static List<Registry> registries(ListableBeanFactory beanFactory, ClassLoader classLoader) {
        List<Registry> registries = new ArrayList<>();
        if (ClassUtils.isPresent(
                "org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry",
                classLoader)) {
            Rabbit.add(beanFactory, registries);
        }
        if (ClassUtils.isPresent(
                "org.springframework.kafka.config.KafkaListenerEndpointRegistry", classLoader)) {
            Kafka.add(beanFactory, registries);
        }
        if (ClassUtils.isPresent(
                "org.springframework.jms.config.JmsListenerEndpointRegistry", classLoader)) {
            Jms.add(beanFactory, registries);
        }
        return registries;
    }

    private static final class Rabbit {

        static @Nullable Runnable warmUp(SmartLifecycle container) {
            if (!(container
                    instanceof
                    org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer
                            rabbit)) {
                return null;
            }
            org.springframework.amqp.rabbit.connection.ConnectionFactory connections =
                    rabbit.getConnectionFactory();
            return () -> connections.createConnection().close();
        }

        static void add(ListableBeanFactory beanFactory, List<Registry> registries) {
            for (org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry registry :
                    beanFactory
                            .getBeansOfType(
                                    org.springframework.amqp.rabbit.listener
                                            .RabbitListenerEndpointRegistry.class,
                                    false,
                                    false)
                            .values()) {
                registries.add(
                        new Registry() {
                            @Override
                            public String name() {
                                return "RabbitListenerEndpointRegistry";
                            }

                            @Override
                            public @Nullable SmartLifecycle find(String id) {
                                return registry.getListenerContainer(id);
                            }

                            @Override
                            public void hold() {
                                requireGuarded(registry, name());
                            }
                        });
            }
        }
    }

    private static final class Kafka {

        /** How long the warm-up waits for the broker's metadata. */
        private static final java.time.Duration METADATA_TIMEOUT = java.time.Duration.ofSeconds(10);

        static boolean owns(SmartLifecycle container) {
            return container
                    instanceof
                    org.springframework.kafka.listener.AbstractMessageListenerContainer<?, ?>;
        }

        /**
         * Returns a metadata round trip through a consumer of the container's consumer factory,
         * closed again; null if the factory cannot be read. The container creates a consumer of its
         * own when it starts (the client shares no connection between consumers), so what the
         * warm-up does ahead of the election is run the client once (its classes loaded, the
         * broker's address and the topics' metadata checked). The consumer is in a group of its own
         * ({@code <group>-warm-up}) and never subscribes, joins or commits.
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
            if (!(factory
                    instanceof org.springframework.kafka.core.ConsumerFactory<?, ?> consumers)) {
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

        static void add(ListableBeanFactory beanFactory, List<Registry> registries) {
            for (org.springframework.kafka.config.KafkaListenerEndpointRegistry registry :
                    beanFactory
                            .getBeansOfType(
                                    org.springframework.kafka.config.KafkaListenerEndpointRegistry
                                            .class,
                                    false,
                                    false)
                            .values()) {
                registries.add(
                        new Registry() {
                            @Override
                            public String name() {
                                return "KafkaListenerEndpointRegistry";
                            }

                            @Override
                            public @Nullable SmartLifecycle find(String id) {
                                return registry.getListenerContainer(id);
                            }

                            @Override
                            public void hold() {
                                registry.setAlwaysStartAfterRefresh(false);
                            }
                        });
            }
        }
    }

    private static final class Jms {

        static void add(ListableBeanFactory beanFactory, List<Registry> registries) {
            for (org.springframework.jms.config.JmsListenerEndpointRegistry registry :
                    beanFactory
                            .getBeansOfType(
                                    org.springframework.jms.config.JmsListenerEndpointRegistry
                                            .class,
                                    false,
                                    false)
                            .values()) {
                registries.add(
                        new Registry() {
                            @Override
                            public String name() {
                                return "JmsListenerEndpointRegistry";
                            }

                            @Override
                            public @Nullable SmartLifecycle find(String id) {
                                return registry.getListenerContainer(id);
                            }

                            @Override
                            public void hold() {
                                requireGuarded(registry, name());
                            }
                        });
            }
        }
    }
}
