package io.redlease.core;

import java.util.concurrent.CompletableFuture;
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

    /**
     * Completed once this run holds no subscription any more: none was opened, opening it failed,
     * or it was closed after {@link #close()}.
     */
    private final CompletableFuture<Void> gone = new CompletableFuture<>();

    Subscription(Campaign campaign) {
        this.campaign = campaign;
    }

    /** Subscribes in the background, when announcements are on and the topology allows them. */
    void open(ElectorConfig config) {
        RedisConnectionFactory factory = campaign.elector.connectionFactory();
        if (!config.releaseNotifications() || factory == null || isCluster(factory)) {
            gone.complete(null);
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
            gone.complete(null);
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
            gone.complete(null);
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
                        closeInBackground(subscribed);
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

    /**
     * Closes the subscription, in the background: unsubscribing waits for Redis. A subscription
     * still being opened is closed once it is.
     *
     * @return completed once this run holds no subscription any more
     */
    CompletableFuture<Void> close() {
        closed = true;
        AutoCloseable subscribed = listener;
        if (subscribed != null) {
            listener = null;
            closeInBackground(subscribed);
        }
        return gone;
    }

    private void closeInBackground(AutoCloseable subscribed) {
        SUBSCRIBING.execute(
                () -> {
                    try {
                        closeQuietly(subscribed);
                    } finally {
                        gone.complete(null);
                    }
                });
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
