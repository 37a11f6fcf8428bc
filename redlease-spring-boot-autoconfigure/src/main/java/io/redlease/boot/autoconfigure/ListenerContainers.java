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
     * connection factory, Boot's default, keeps it open for the container); for a JMS container, a
     * connection and a session of its connection factory, both closed again; null for others.
     */
    static @Nullable Runnable warmUp(SmartLifecycle container, ClassLoader classLoader) {
        Runnable jms =
                ClassUtils.isPresent(
                                "org.springframework.jms.listener.AbstractMessageListenerContainer",
                                classLoader)
                        ? Jms.warmUp(container)
                        : null;
        if (jms != null) {
            return jms;
        }
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

    /**
     * Refuses a {@code @LeaderOnly} lifecycle bean that is a JMS listener container whose
     * acknowledgement would lose a message whose listener threw, as for a container named in {@code
     * redlease.lifecycle.listeners}.
     */
    static void checkLeaderOnlyBean(String beanName, Object bean, ClassLoader classLoader) {
        if (ClassUtils.isPresent(
                        "org.springframework.jms.listener.AbstractMessageListenerContainer",
                        classLoader)
                && bean instanceof org.springframework.jms.listener.MessageListenerContainer jms) {
            Jms.checkAcknowledgement(beanName, jms);
        }
        if (ClassUtils.isPresent(
                        "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer",
                        classLoader)
                && bean
                        instanceof
                        org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer
                                rabbit) {
            Rabbit.check(beanName, rabbit);
        }
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

        /**
         * Refuses a container that would not requeue a message whose listener threw (a write
         * refused by the fence): one that acknowledges on delivery ({@code AcknowledgeMode.NONE})
         * or rejects a failed message without requeueing it ({@code defaultRequeueRejected} false).
         */
        /**
         * Refuses a container that would lose a message whose listener threw. Takes any container:
         * Spring AMQP's registry returns the listener container interface of {@code
         * org.springframework.amqp.rabbit.listener} up to 4.0 and of {@code
         * org.springframework.amqp.core} since 4.1.
         */
        static void check(String id, SmartLifecycle container) {
            if (!(container
                    instanceof
                    org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer
                            rabbit)) {
                return;
            }
            if (rabbit.getAcknowledgeMode() == org.springframework.amqp.core.AcknowledgeMode.NONE) {
                throw new IllegalStateException(
                        "redlease: the RabbitMQ listener container '"
                                + id
                                + "' acknowledges in mode NONE (the broker acknowledges on"
                                + " delivery), so a message whose listener throws (a write"
                                + " refused by the fence) is lost instead of requeued for the new"
                                + " leader. Use AcknowledgeMode.AUTO"
                                + " (spring.rabbitmq.listener.simple.acknowledge-mode=auto, the"
                                + " default)");
            }
            if (Boolean.FALSE.equals(
                    new org.springframework.beans.DirectFieldAccessor(rabbit)
                            .getPropertyValue("defaultRequeueRejected"))) {
                throw new IllegalStateException(
                        "redlease: the RabbitMQ listener container '"
                                + id
                                + "' does not requeue a message whose listener throws"
                                + " (defaultRequeueRejected is false), so a write refused by the"
                                + " fence drops the message (or dead-letters it) instead of"
                                + " requeueing it for the new leader. Set"
                                + " spring.rabbitmq.listener.simple.default-requeue-rejected=true"
                                + " (the default) or setDefaultRequeueRejected(true) on its"
                                + " container factory");
            }
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
                                SmartLifecycle container = rabbitContainer(registry, id);
                                if (container != null) {
                                    check(id, container);
                                }
                                return container;
                            }

                            @Override
                            public void hold() {
                                requireGuarded(registry, name());
                            }
                        });
            }
        }
    }

    /**
     * Looks a RabbitMQ listener container up by id. Called reflectively: the registry's method
     * returns the container interface of {@code org.springframework.amqp.rabbit.listener} up to
     * Spring AMQP 4.0 and of {@code org.springframework.amqp.core} since 4.1, so a direct call
     * compiled against one fails with {@link NoSuchMethodError} on the other.
     */
    static @Nullable SmartLifecycle rabbitContainer(Object registry, String id) {
        java.lang.reflect.Method lookup =
                org.springframework.util.ReflectionUtils.findMethod(
                        registry.getClass(), "getListenerContainer", String.class);
        if (lookup == null) {
            throw new IllegalStateException(
                    "redlease: "
                            + registry.getClass().getName()
                            + " has no getListenerContainer(String)");
        }
        return (SmartLifecycle)
                org.springframework.util.ReflectionUtils.invokeMethod(lookup, registry, id);
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

        /**
         * Refuses a container in a container group ({@code @KafkaListener(containerGroup = ...)}):
         * the group is a {@code Lifecycle} bean whose {@code start()}, called by an explicit {@code
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
                                org.springframework.kafka.listener.MessageListenerContainer
                                        container = registry.getListenerContainer(id);
                                if (container != null) {
                                    checkGroup(beanFactory, id, container);
                                }
                                return container;
                            }

                            @Override
                            public void hold() {
                                registry.setAlwaysStartAfterRefresh(false);
                            }
                        });
            }
        }
    }

    /**
     * JMS: a leader-only container must redeliver a message whose listener threw (a write refused
     * by the fence), so one whose acknowledgement would lose it is refused when it is looked up;
     * its warm-up opens and closes a connection and a session of the container's connection factory
     * (Spring's container opens a connection of its own at each start and closes it at each stop,
     * so none can be handed to it), which loads and starts the JMS client ahead of election.
     */
    private static final class Jms {

        static @Nullable Runnable warmUp(SmartLifecycle container) {
            if (!(container
                            instanceof
                            org.springframework.jms.listener.AbstractMessageListenerContainer jms)
                    || jms.getConnectionFactory() == null) {
                return null;
            }
            jakarta.jms.ConnectionFactory connections = jms.getConnectionFactory();
            boolean transacted = jms.isSessionTransacted();
            int acknowledgeMode = jms.getSessionAcknowledgeMode();
            return () -> {
                try (jakarta.jms.Connection connection = connections.createConnection()) {
                    connection.createSession(transacted, acknowledgeMode).close();
                } catch (jakarta.jms.JMSException ex) {
                    throw org.springframework.jms.support.JmsUtils.convertJmsAccessException(ex);
                }
            };
        }

        /**
         * Refuses a container that starts with the application (with the fix for JMS, whose
         * listeners take {@code autoStartup} from their container factory), and one that would
         * acknowledge a message whose listener threw: neither transacted (a local transaction, or a
         * JMS or JTA transaction manager) nor in {@code CLIENT_ACKNOWLEDGE} mode, or not a
         * container whose acknowledgement can be read.
         */
        static void check(
                String id, org.springframework.jms.listener.MessageListenerContainer container) {
            if (!(container
                    instanceof
                    org.springframework.jms.listener.AbstractMessageListenerContainer jms)) {
                throw new IllegalStateException(
                        "redlease: cannot tell whether the JMS listener container '"
                                + id
                                + "' ("
                                + container.getClass().getName()
                                + ") redelivers a message whose listener threw, as a write"
                                + " refused by the fence does; only Spring's"
                                + " DefaultMessageListenerContainer and"
                                + " SimpleMessageListenerContainer can be leader-only. Create it"
                                + " with a DefaultJmsListenerContainerFactory");
            }
            if (jms.isAutoStartup()) {
                throw new IllegalStateException(
                        "redlease: the JMS listener container '"
                                + id
                                + "' starts with the application (its container factory's"
                                + " autoStartup is true), so it would run on every instance, leader"
                                + " or not. @JmsListener has no autoStartup of its own: create it"
                                + " with a container factory whose autoStartup is false"
                                + " (spring.jms.listener.auto-startup=false for Spring Boot's, or"
                                + " a DefaultJmsListenerContainerFactory of its own with"
                                + " setAutoStartup(false), named in @JmsListener(containerFactory"
                                + " = ...)); redlease starts it when this instance is elected");
            }
            checkAcknowledgement(id, container);
        }

        /**
         * Refuses a container that would acknowledge a message whose listener threw, or whose
         * acknowledgement cannot be read.
         */
        static void checkAcknowledgement(
                String id, org.springframework.jms.listener.MessageListenerContainer container) {
            if (!(container
                    instanceof
                    org.springframework.jms.listener.AbstractMessageListenerContainer jms)) {
                throw new IllegalStateException(
                        "redlease: cannot tell whether the JMS listener container '"
                                + id
                                + "' ("
                                + container.getClass().getName()
                                + ") redelivers a message whose listener threw, as a write"
                                + " refused by the fence does; only Spring's"
                                + " DefaultMessageListenerContainer and"
                                + " SimpleMessageListenerContainer can be leader-only");
            }
            if (jms.isSessionTransacted()
                    || jms.getSessionAcknowledgeMode() == jakarta.jms.Session.CLIENT_ACKNOWLEDGE
                    || transactionManager(id, jms)) {
                return;
            }
            int mode = jms.getSessionAcknowledgeMode();
            boolean vendor =
                    mode != jakarta.jms.Session.AUTO_ACKNOWLEDGE
                            && mode != jakarta.jms.Session.DUPS_OK_ACKNOWLEDGE;
            throw new IllegalStateException(
                    "redlease: the JMS listener container '"
                            + id
                            + "' is not transacted and acknowledges in mode "
                            + acknowledgeMode(mode)
                            + ", so a message whose listener throws (a write refused by the fence)"
                            + (vendor ? " may be" : " is")
                            + " acknowledged and lost instead of redelivered to the new"
                            + " leader. Use a transacted session"
                            + " (spring.jms.listener.session.transacted=true, Spring Boot's"
                            + " default, or setSessionTransacted(true) on its container factory or"
                            + " on the container)"
                            + " or CLIENT_ACKNOWLEDGE");
        }

        /** Returns whether a polling container's receive runs in a JMS or JTA transaction. */
        private static boolean transactionManager(
                String id, org.springframework.jms.listener.AbstractMessageListenerContainer jms) {
            if (!(jms
                    instanceof
                    org.springframework.jms.listener.AbstractPollingMessageListenerContainer
                            polling)) {
                return false;
            }
            java.lang.reflect.Method getter =
                    org.springframework.util.ReflectionUtils.findMethod(
                            org.springframework.jms.listener.AbstractPollingMessageListenerContainer
                                    .class,
                            "getTransactionManager");
            Object manager;
            try {
                org.springframework.util.ReflectionUtils.makeAccessible(
                        java.util.Objects.requireNonNull(getter));
                manager = getter.invoke(polling);
            } catch (ReflectiveOperationException | RuntimeException ex) {
                throw new IllegalStateException(
                        "redlease: cannot read the transaction manager of the JMS listener"
                                + " container '"
                                + id
                                + "', so whether it redelivers a message whose listener threw"
                                + " is unknown. Use a transacted session"
                                + " (spring.jms.listener.session.transacted=true, Spring Boot's"
                                + " default) or CLIENT_ACKNOWLEDGE",
                        ex);
            }
            if (manager
                    instanceof
                    org.springframework.transaction.support.ResourceTransactionManager resource) {
                // A transaction of another resource makes Spring transact the session itself
                // (isSessionTransacted); one of this container's connection factory covers its
                // receive.
                return jms.getConnectionFactory() != null
                        && org.springframework.transaction.support.TransactionSynchronizationUtils
                                .sameResourceFactory(resource, jms.getConnectionFactory());
            }
            return manager != null && isJta(manager.getClass());
        }

        /** Returns whether the class is Spring's JTA transaction manager or extends it. */
        private static boolean isJta(@Nullable Class<?> type) {
            for (Class<?> current = type; current != null; current = current.getSuperclass()) {
                if (current.getName()
                        .equals("org.springframework.transaction.jta.JtaTransactionManager")) {
                    return true;
                }
            }
            return false;
        }

        private static String acknowledgeMode(int mode) {
            return switch (mode) {
                case jakarta.jms.Session.AUTO_ACKNOWLEDGE -> "AUTO_ACKNOWLEDGE";
                case jakarta.jms.Session.DUPS_OK_ACKNOWLEDGE -> "DUPS_OK_ACKNOWLEDGE";
                default -> mode + " (a vendor's own mode, which redlease cannot check)";
            };
        }

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
                                org.springframework.jms.listener.MessageListenerContainer
                                        container = registry.getListenerContainer(id);
                                if (container != null) {
                                    check(id, container);
                                }
                                return container;
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
