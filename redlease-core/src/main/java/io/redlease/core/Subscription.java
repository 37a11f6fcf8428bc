package io.redlease.core;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A run's subscription to its election's release announcements: a follower that hears one tries to
 * acquire at once instead of waiting for its next look at the lease. Confined to the run's loop,
 * except for the subscribing itself, which waits for Redis on the blocking pool.
 */
final class Subscription {

    /**
     * Subscribes and unsubscribes, on up to {@value #SUBSCRIBING_THREADS} threads that end when
     * idle: a subscription change that waits for Redis (a refused UNSUBSCRIBE waits for its
     * confirmation) holds up only its own thread.
     */
    private static final int SUBSCRIBING_THREADS = 4;

    private static final ThreadPoolExecutor SUBSCRIBING = subscribing();

    private final Campaign campaign;

    private volatile @Nullable AutoCloseable listener;

    private boolean closed;

    Subscription(Campaign campaign) {
        this.campaign = campaign;
    }

    /** Subscribes in the background, when announcements are on and the topology allows them. */
    void open(ElectorConfig config) {
        RedisConnectionFactory factory = campaign.elector.connectionFactory();
        if (!config.releaseNotifications() || factory == null || isCluster(factory)) {
            return;
        }
        SUBSCRIBING.execute(() -> subscribe(factory, config));
    }

    private static boolean isCluster(RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
    }

    private @Nullable Void subscribe(RedisConnectionFactory factory, ElectorConfig config) {
        AutoCloseable subscribed;
        if (ReleaseNotifications.stopped(factory)) {
            return null;
        }
        try {
            subscribed =
                    ReleaseNotifications.subscribe(
                            factory,
                            LeaseProtocol.releaseChannel(config.name()),
                            config.instanceId(),
                            campaign::wake);
        } catch (RuntimeException ex) {
            if (ReleaseNotifications.stopped(factory)) {
                return null; // the application is shutting its Redis client down
            }
            // Followers still poll; the failure shows as slower hand-offs only.
            Campaign.logger.warn(
                    "redlease: cannot subscribe to release notifications of '"
                            + config.name()
                            + "'; this follower takes over by polling instead",
                    ex);
            return null;
        }
        campaign.execute(
                () -> {
                    if (closed) {
                        // Unsubscribing waits for Redis (for a dead connection, up to the
                        // client's command timeout): never on the loop, whose other elections
                        // would stall meanwhile.
                        SUBSCRIBING.execute(() -> closeQuietly(subscribed));
                        return;
                    }
                    listener = subscribed;
                    // A release announced before the subscription took effect was not heard: a
                    // follower looks at the lease once more now, unless it is backing off.
                    if (!campaign.backingOff()) {
                        campaign.wakeOnLoop();
                    }
                });
        return null;
    }

    private static ThreadPoolExecutor subscribing() {
        ThreadPoolExecutor executor =
                new ThreadPoolExecutor(
                        SUBSCRIBING_THREADS,
                        SUBSCRIBING_THREADS,
                        2,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        runnable -> ElectorRuntime.daemon(runnable, "redlease-subscriptions"));
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /** Returns whether releases are being announced to this run. */
    boolean listening() {
        return listener != null;
    }

    void close() {
        closed = true;
        AutoCloseable subscribed = listener;
        if (subscribed != null) {
            listener = null;
            SUBSCRIBING.execute(() -> closeQuietly(subscribed));
        }
    }

    private static @Nullable Void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ex) {
            // Nothing to do: the listener is gone either way.
        }
        return null;
    }
}
