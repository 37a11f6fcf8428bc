package io.redlease.core;

import io.redlease.core.ReleaseNotifications.Registration;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisAccessor;
import org.springframework.data.redis.core.RedisOperations;

/**
 * Hears the release announcements of a group of elections on the connection factory's shared
 * release subscription, without a follower running for each: a partitioned election's balancing
 * thread wakes with it when another instance releases one of its partitions. Plumbing for {@code
 * io.redlease.core.partition}, not meant for applications.
 *
 * <p>{@link #subscribe()} subscribes in the background (on the engine's subscribing threads) unless
 * the subscription is in place or under way; the owner calls it again on its own schedule until it
 * is. A lost subscription connection is left to the client to restore for the same grace period as
 * an elector's before a call builds it anew. Nothing may depend on an announcement: a lost one
 * costs the owner its own polling delay.
 */
public final class ReleaseWatch {

    private final Registration registration;

    private final AtomicBoolean attempting = new AtomicBoolean();

    /** When the subscription was last lost (nanos, never 0), or 0. */
    private volatile long interruptedAt;

    private volatile boolean closed;

    /** Whether the subscription has been confirmed since it was made or last interrupted. */
    private volatile boolean confirmed;

    private ReleaseWatch(
            RedisConnectionFactory factory,
            List<String> electionNames,
            String ownId,
            IntConsumer heard) {
        List<String> channels = electionNames.stream().map(LeaseProtocol::releaseChannel).toList();
        Map<ByteBuffer, Integer> indexes = new HashMap<>();
        for (int i = 0; i < channels.size(); i++) {
            indexes.put(ByteBuffer.wrap(channels.get(i).getBytes(StandardCharsets.UTF_8)), i);
        }
        this.registration =
                ReleaseNotifications.register(
                        factory,
                        channels,
                        ownId,
                        new Registration.Listener() {
                            @Override
                            public void released() {
                                heard.accept(-1);
                            }

                            @Override
                            public void released(byte[] channel) {
                                heard.accept(indexes.getOrDefault(ByteBuffer.wrap(channel), -1));
                            }

                            @Override
                            public void subscribed() {
                                interruptedAt = 0;
                                // A release announced before the subscription was in place was
                                // not heard. Only the first confirmation since the watch
                                // subscribed or was interrupted says so: an elector subscribing
                                // to a channel the watch shares (a partition campaigned for)
                                // confirms it again, with nothing missed meanwhile.
                                if (!confirmed) {
                                    confirmed = true;
                                    heard.accept(-1);
                                }
                            }

                            @Override
                            public void interrupted(Throwable cause) {
                                confirmed = false;
                                interruptedAt = System.nanoTime() | 1;
                            }
                        });
    }

    /**
     * Registers a watch of the elections' releases, without any I/O; empty where announcements are
     * not used: no connection factory behind the operations, or Redis Cluster.
     *
     * @param electionNames the elections whose releases to hear
     * @param ownId releases by this instance id are not reported
     * @param heard called on a client thread with the index in {@code electionNames} of each
     *     release heard, and with -1 when the subscription lands, first or again after an
     *     interruption (a release may have been missed before); it must not block
     */
    public static Optional<ReleaseWatch> open(
            RedisOperations<String, String> redis,
            List<String> electionNames,
            String ownId,
            IntConsumer heard) {
        RedisConnectionFactory factory =
                redis instanceof RedisAccessor accessor ? accessor.getConnectionFactory() : null;
        if (factory == null
                || (factory instanceof LettuceConnectionFactory lettuce
                        && lettuce.isClusterAware())) {
            return Optional.empty();
        }
        return Optional.of(new ReleaseWatch(factory, electionNames, ownId, heard));
    }

    /**
     * Returns the channel on which the named election's releases are announced.
     *
     * @param electionName the election's name
     */
    public static String channel(String electionName) {
        return LeaseProtocol.releaseChannel(electionName);
    }

    /** Subscribes in the background unless subscribed, under way, closed or in its grace period. */
    public void subscribe() {
        if (closed || registration.subscribed()) {
            return;
        }
        long lost = interruptedAt;
        if (lost != 0
                && System.nanoTime() - lost
                        < TimeUnit.MILLISECONDS.toNanos(Subscription.GRACE_MILLIS)) {
            return;
        }
        if (!attempting.compareAndSet(false, true)) {
            return;
        }
        Subscription.later(
                () -> {
                    try {
                        registration.subscribe();
                    } catch (RuntimeException ex) {
                        Campaign.logger.debug(
                                "redlease: subscribing to release notifications failed; retried"
                                        + " at the next round",
                                ex);
                    } finally {
                        attempting.set(false);
                    }
                });
    }

    /** Returns whether releases are heard now, as far as the client tells. */
    public boolean listening() {
        return !closed && registration.subscribed();
    }

    /**
     * Unsubscribes in the background; the watch cannot subscribe again.
     *
     * @return completed once unsubscribed: wait for it, bounded, before the connection factory may
     *     be destroyed
     */
    public CompletableFuture<Void> close() {
        closed = true;
        CompletableFuture<Void> unsubscribed = new CompletableFuture<>();
        Subscription.later(
                () -> {
                    try {
                        registration.close();
                    } catch (RuntimeException ex) {
                        Campaign.logger.debug(
                                "redlease: unsubscribing from release notifications failed", ex);
                    } finally {
                        unsubscribed.complete(null);
                    }
                });
        return unsubscribed;
    }

    @Override
    public String toString() {
        return "ReleaseWatch[" + (listening() ? "listening" : "not listening") + "]";
    }
}
