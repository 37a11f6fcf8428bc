package io.redlease.boot.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
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

    static void requireGuarded(Object registry, String name) {
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
     * Adds a {@link Registry} for each bean of an endpoint registry type, named by the type's
     * simple name, whose containers {@code find} looks up (and checks) by id and which {@code hold}
     * keeps from starting them.
     */
    static <R> void addEach(
            ListableBeanFactory beanFactory,
            Class<R> type,
            List<Registry> registries,
            BiFunction<R, String, @Nullable SmartLifecycle> find,
            BiConsumer<R, String> hold) {
        String name = type.getSimpleName();
        for (R registry : beanFactory.getBeansOfType(type, false, false).values()) {
            registries.add(
                    new Registry() {
                        @Override
                        public String name() {
                            return name;
                        }

                        @Override
                        public @Nullable SmartLifecycle find(String id) {
                            return find.apply(registry, id);
                        }

                        @Override
                        public void hold() {
                            hold.accept(registry, name);
                        }
                    });
        }
    }

    /**
     * Returns what opens a listener container's broker connection ahead of its start: for a
     * RabbitMQ container, a connection of its connection factory, closed again (a caching
     * connection factory, Boot's default, keeps it open for the container); for a JMS container, a
     * connection and a session of its connection factory, both closed again; null for others.
     */
    static @Nullable Runnable warmUp(
            SmartLifecycle container,
            ClassLoader classLoader,
            @Nullable ListableBeanFactory beans) {
        Runnable jms = isJmsPresent(classLoader) ? JmsContainers.warmUp(container) : null;
        if (jms != null) {
            return jms;
        }
        if (ClassUtils.isPresent(
                        "org.springframework.kafka.listener.AbstractMessageListenerContainer",
                        classLoader)
                && KafkaContainers.owns(container)) {
            return KafkaContainers.warmUp(container);
        }
        if (ClassUtils.isPresent(
                "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer",
                classLoader)) {
            return RabbitContainers.warmUp(container, beans);
        }
        return null;
    }

    /**
     * Refuses a {@code @LeaderOnly} lifecycle bean that is a JMS listener container whose
     * acknowledgement would lose a message whose listener threw, as for a container named in {@code
     * redlease.lifecycle.listeners}.
     */
    static void checkLeaderOnlyBean(String beanName, Object bean, ClassLoader classLoader) {
        if (isJmsPresent(classLoader)
                && bean instanceof org.springframework.jms.listener.MessageListenerContainer jms) {
            JmsContainers.checkAcknowledgement(beanName, jms);
        }
        if (ClassUtils.isPresent(
                        "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer",
                        classLoader)
                && bean
                        instanceof
                        org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer
                                rabbit) {
            RabbitContainers.check(beanName, rabbit);
        }
    }

    /** Returns the registries that are both on the class path and beans of the application. */
    static List<Registry> registries(ListableBeanFactory beanFactory, ClassLoader classLoader) {
        List<Registry> registries = new ArrayList<>();
        if (ClassUtils.isPresent(
                "org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry",
                classLoader)) {
            RabbitContainers.add(beanFactory, registries);
        }
        if (ClassUtils.isPresent(
                "org.springframework.kafka.config.KafkaListenerEndpointRegistry", classLoader)) {
            KafkaContainers.add(beanFactory, registries);
        }
        if (isJmsPresent(classLoader)) {
            JmsContainers.add(beanFactory, registries);
        }
        return registries;
    }

    /**
     * Returns whether both spring-jms and the JMS API are on the class path: spring-jms does not
     * bring the API with it, and the JMS code here reaches {@code jakarta.jms} types.
     */
    private static boolean isJmsPresent(ClassLoader classLoader) {
        return ClassUtils.isPresent(
                        "org.springframework.jms.config.JmsListenerEndpointRegistry", classLoader)
                && ClassUtils.isPresent("jakarta.jms.ConnectionFactory", classLoader);
    }
}
