package io.redlease.boot.autoconfigure;

import io.redlease.boot.autoconfigure.ListenerContainers.Registry;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;

/**
 * RabbitMQ's listener containers for {@link ListenerContainers}: the registry lookup, the check
 * that a leader-only container requeues a message whose listener threw, and the warm-up.
 */
final class RabbitContainers {

    private static final org.apache.commons.logging.Log logger =
            org.apache.commons.logging.LogFactory.getLog("io.redlease.lifecycle");

    private RabbitContainers() {}

    /**
     * Opens a connection of the container's connection factory, unless the application declares a
     * named exclusive queue: the first connection makes its {@code RabbitAdmin} declare every
     * queue, and a named exclusive one would belong to this follower's connection, so that a leader
     * elsewhere could neither declare nor consume it. No warm-up then, logged at INFO. (A queue
     * whose name is made per application, as an {@code AnonymousQueue}'s is, locks no other
     * instance out.)
     */
    static @Nullable Runnable warmUp(
            SmartLifecycle container, @Nullable ListableBeanFactory beans) {
        if (!(container
                instanceof
                org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer rabbit)) {
            return null;
        }
        List<String> exclusive = exclusiveQueues(beans);
        if (!exclusive.isEmpty()) {
            logger.info(
                    "redlease: no warm standby for the leader-only RabbitMQ listener container"
                            + " '"
                            + rabbit.getListenerId()
                            + "': the application declares the exclusive queue(s) "
                            + exclusive
                            + ", which a follower's first connection would declare and own; it"
                            + " connects when this instance is elected");
            return null;
        }
        org.springframework.amqp.rabbit.connection.ConnectionFactory connections =
                rabbit.getConnectionFactory();
        return () -> connections.createConnection().close();
    }

    /** The names of the exclusive queues the application declares (as beans or declarables). */
    private static List<String> exclusiveQueues(@Nullable ListableBeanFactory beans) {
        List<String> names = new java.util.ArrayList<>();
        if (beans == null) {
            return names;
        }
        List<org.springframework.amqp.core.Queue> queues =
                new java.util.ArrayList<>(
                        beans.getBeansOfType(
                                        org.springframework.amqp.core.Queue.class, false, false)
                                .values());
        for (org.springframework.amqp.core.Declarables declarables :
                beans.getBeansOfType(org.springframework.amqp.core.Declarables.class, false, false)
                        .values()) {
            queues.addAll(
                    declarables.getDeclarablesByType(org.springframework.amqp.core.Queue.class));
        }
        for (org.springframework.amqp.core.Queue queue : queues) {
            if (queue.isExclusive()
                    && queue.shouldDeclare()
                    && !(queue instanceof org.springframework.amqp.core.AnonymousQueue)
                    && !queue.getName().isEmpty()
                    && !queue.getName().startsWith("spring.gen-")) {
                names.add(queue.getName());
            }
        }
        return names;
    }

    /**
     * Refuses a container that would not requeue a message whose listener threw (a write refused by
     * the fence): one that acknowledges on delivery ({@code AcknowledgeMode.NONE}) or rejects a
     * failed message without requeueing it ({@code defaultRequeueRejected} false). Takes any
     * container: Spring AMQP's registry returns the listener container interface of {@code
     * org.springframework.amqp.rabbit.listener} up to 4.0 and of {@code
     * org.springframework.amqp.core} since 4.1.
     */
    static void check(String id, SmartLifecycle container) {
        if (!(container
                instanceof
                org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer rabbit)) {
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
        ListenerContainers.addEach(
                beanFactory,
                org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry.class,
                registries,
                (registry, id) -> {
                    SmartLifecycle container = container(registry, id);
                    if (container != null) {
                        check(id, container);
                    }
                    return container;
                },
                ListenerContainers::requireGuarded);
    }

    /**
     * Looks a RabbitMQ listener container up by id. Called reflectively: the registry's method
     * returns the container interface of {@code org.springframework.amqp.rabbit.listener} up to
     * Spring AMQP 4.0 and of {@code org.springframework.amqp.core} since 4.1, so a direct call
     * compiled against one fails with {@link NoSuchMethodError} on the other.
     */
    static @Nullable SmartLifecycle container(Object registry, String id) {
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
}
