package io.redlease.boot.autoconfigure;

import io.redlease.boot.autoconfigure.ListenerContainers.Registry;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;

/**
 * JMS: a leader-only container must redeliver a message whose listener threw (a write refused by
 * the fence), so one whose acknowledgement would lose it is refused when it is looked up; its
 * warm-up opens and closes a connection and a session of the container's connection factory
 * (Spring's container opens a connection of its own at each start and closes it at each stop, so
 * none can be handed to it), which loads and starts the JMS client ahead of election.
 */
final class JmsContainers {

    private static final org.apache.commons.logging.Log logger =
            org.apache.commons.logging.LogFactory.getLog("io.redlease.lifecycle");

    private JmsContainers() {}

    static @Nullable Runnable warmUp(SmartLifecycle container) {
        if (!(container
                        instanceof
                        org.springframework.jms.listener.AbstractMessageListenerContainer jms)
                || jms.getConnectionFactory() == null) {
            return null;
        }
        jakarta.jms.ConnectionFactory connections = jms.getConnectionFactory();
        boolean sharedWithClientId =
                connections
                                instanceof
                                org.springframework.jms.connection.SingleConnectionFactory single
                        && new org.springframework.beans.DirectFieldAccessor(single)
                                        .getPropertyValue("clientId")
                                != null;
        if (sharedWithClientId || jms.getClientId() != null) {
            // A connection the warm-up leaves open (a shared or pooled one) could keep the client
            // id, which the broker gives to one connection at a time, or refuse it to the
            // container later ("setClientID can only be called directly after the connection is
            // created").
            logger.info(
                    "redlease: no warm standby for the leader-only JMS listener container of '"
                            + jms.getDestinationName()
                            + "': it connects with a client id; it connects when this instance"
                            + " is elected");
            return null;
        }
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
     * Refuses a container that starts with the application (with the fix for JMS, whose listeners
     * take {@code autoStartup} from their container factory), and one that would acknowledge a
     * message whose listener threw: neither transacted (a local transaction, or a JMS or JTA
     * transaction manager) nor in {@code CLIENT_ACKNOWLEDGE} mode, or not a container whose
     * acknowledgement can be read.
     */
    static void check(
            String id, org.springframework.jms.listener.MessageListenerContainer container) {
        if (!(container
                instanceof org.springframework.jms.listener.AbstractMessageListenerContainer jms)) {
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
                instanceof org.springframework.jms.listener.AbstractMessageListenerContainer jms)) {
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
                org.springframework.jms.listener.AbstractPollingMessageListenerContainer polling)) {
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
        ListenerContainers.addEach(
                beanFactory,
                org.springframework.jms.config.JmsListenerEndpointRegistry.class,
                registries,
                (registry, id) -> {
                    org.springframework.jms.listener.MessageListenerContainer container =
                            registry.getListenerContainer(id);
                    if (container != null) {
                        check(id, container);
                    }
                    return container;
                },
                ListenerContainers::requireGuarded);
    }
}
