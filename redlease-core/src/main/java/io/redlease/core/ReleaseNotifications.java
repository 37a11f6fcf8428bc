package io.redlease.core;

import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.Lifecycle;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Listens for lease releases announced on Pub/Sub and wakes the followers waiting for them: one
 * subscription connection per connection factory, however many elections use it.
 *
 * <p>Correctness never depends on a notification: followers keep polling, so a lost one costs only
 * the polling delay.
 */
final class ReleaseNotifications {

    private static final Log logger = LogFactory.getLog(ReleaseNotifications.class);

    private static final Map<RedisConnectionFactory, ReleaseNotifications> byFactory =
            new IdentityHashMap<>();

    private final RedisConnectionFactory factory;

    private final RedisMessageListenerContainer container;

    private int listeners;

    /**
     * Serialises adding and removing listeners. The container checks, while removing one, whether
     * any are left and stops listening if not; a listener added at the same moment could be left
     * registered on a subscription that is being torn down, and never hear a release.
     */
    private final Object changes = new Object();

    private ReleaseNotifications(RedisConnectionFactory factory) {
        this.factory = factory;
        this.container = new RedisMessageListenerContainer();
        container.setConnectionFactory(factory);
        container.setTaskExecutor(Runnable::run);
        container.setSubscriptionExecutor(
                runnable -> ElectorRuntime.daemon(runnable, "redlease-subscription").start());
        container.setBeanName("redlease-release-notifications");
        container.afterPropertiesSet();
        container.start();
    }

    /**
     * Subscribes to one election's release channel; call off the loop thread, as subscribing waits
     * for Redis.
     *
     * @param ownId releases by this instance id are ignored
     * @param wake called, on a client thread, for each release by another instance
     * @return the subscription, to close when the elector stops
     */
    static AutoCloseable subscribe(
            RedisConnectionFactory factory, String channel, String ownId, Runnable wake) {
        byte[] own = ownId.getBytes(StandardCharsets.UTF_8);
        MessageListener listener =
                (message, pattern) -> {
                    if (!java.util.Arrays.equals(message.getBody(), own)) {
                        wake.run();
                    }
                };
        ChannelTopic topic = new ChannelTopic(channel);
        ReleaseNotifications notifications;
        synchronized (byFactory) {
            notifications = byFactory.computeIfAbsent(factory, ReleaseNotifications::new);
            notifications.listeners++;
        }
        try {
            synchronized (notifications.changes) {
                notifications.container.addMessageListener(listener, topic);
            }
        } catch (RuntimeException ex) {
            notifications.remove(listener, topic);
            throw ex;
        }
        return () -> notifications.remove(listener, topic);
    }

    /**
     * Returns whether a connection factory has been stopped or destroyed (an application closing
     * its context may do that before its electors' subscriptions have finished closing): its client
     * is shut down, so its subscriptions are gone with it and an unsubscribe could only fail.
     */
    static boolean stopped(RedisConnectionFactory factory) {
        return factory instanceof Lifecycle lifecycle && !lifecycle.isRunning();
    }

    private void remove(MessageListener listener, ChannelTopic topic) {
        boolean stopped = stopped(factory);
        if (!stopped) {
            synchronized (changes) {
                container.removeMessageListener(listener, topic);
            }
        }
        boolean last;
        synchronized (byFactory) {
            last = --listeners == 0;
            if (last) {
                byFactory.remove(factory);
            }
        }
        if (last && !stopped) {
            try {
                container.destroy();
            } catch (Exception ex) {
                logger.debug("redlease: closing the release subscription failed", ex);
            }
        }
    }
}
