package io.redlease.core;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Tells of Lettuce subscription connections lost without being closed by their owner: Lettuce
 * reconnects and subscribes again by itself (unless auto-reconnect is off), and meanwhile no
 * release is heard. It watches every subscription connection of the factory's client, so a lost
 * connection of the application's own also counts (which costs one needless rebuild at most).
 */
final class SubscriptionDisconnects implements RedisConnectionStateListener {

    private final AbstractRedisClient client;

    private final Consumer<Throwable> interrupted;

    private SubscriptionDisconnects(AbstractRedisClient client, Consumer<Throwable> interrupted) {
        this.client = client;
        this.interrupted = interrupted;
    }

    /**
     * Watches a Lettuce factory's client; returns null for other factories, or a factory not
     * started yet.
     */
    static @Nullable SubscriptionDisconnects watch(
            RedisConnectionFactory factory, Consumer<Throwable> interrupted) {
        if (!(factory instanceof LettuceConnectionFactory lettuce)) {
            return null;
        }
        AbstractRedisClient client = lettuce.getNativeClient();
        if (client == null) {
            return null;
        }
        SubscriptionDisconnects disconnects = new SubscriptionDisconnects(client, interrupted);
        client.addListener(disconnects);
        return disconnects;
    }

    void stop() {
        client.removeListener(this);
    }

    @Override
    public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
        if (connection instanceof StatefulRedisPubSubConnection<?, ?> && !connection.isClosed()) {
            interrupted.accept(
                    new IllegalStateException("redlease: the client reported it disconnected"));
        }
    }
}
