package io.redlease.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.Lifecycle;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.data.redis.listener.Topic;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Listens for lease releases announced on Pub/Sub and wakes the followers waiting for them: one
 * subscription connection per connection factory, however many elections use it.
 *
 * <p>Each election {@link #register registers} once and then asks its registration to {@link
 * Registration#subscribe subscribe} until that succeeds. A subscription that fails, or one whose
 * connection is lost and not restored by the client itself (see {@link Registration.Listener}), is
 * restored by building the connection's subscription anew with every registered channel.
 *
 * <p>Correctness never depends on a notification: followers keep polling, so a lost one costs only
 * the polling delay.
 */
final class ReleaseNotifications {

    private static final Log logger = LogFactory.getLog(ReleaseNotifications.class);

    private static final Map<RedisConnectionFactory, ReleaseNotifications> byFactory =
            new IdentityHashMap<>();

    /**
     * Called with the channel and the instance id before a registration subscribes, on the
     * subscribing thread; null except in this package's tests, which hold a subscription back (or
     * fail it) with it.
     */
    static volatile @Nullable BiConsumer<String, String> beforeSubscribe;

    private final RedisConnectionFactory factory;

    /** Guarded by {@link #byFactory}. */
    private final Set<Registration> registrations = new LinkedHashSet<>();

    /**
     * Serialises subscribing, restoring and unsubscribing: each waits for Redis while holding it,
     * on the subscribing threads only.
     */
    private final Object changes = new Object();

    /** The subscription in use; null until the first one succeeds. Guarded by {@link #changes}. */
    private volatile @Nullable Container container;

    /** How long a channel added to the subscription in place may wait for its confirmation. */
    static final long ADD_BOUND_MILLIS = 5000;

    /**
     * Adds channels to a subscription in place, and drops them, for a thread that waits a bounded
     * time (see {@link #add}); a thread idle for 2 s ends, so that a steady application keeps none.
     */
    private static final ExecutorService ADDING =
            new ThreadPoolExecutor(
                    0,
                    Integer.MAX_VALUE,
                    2,
                    TimeUnit.SECONDS,
                    new SynchronousQueue<>(),
                    runnable -> ElectorRuntime.daemon(runnable, "redlease-subscription-add"));

    /** Whether adding a channel to {@link #container} failed: the next subscribe rebuilds it. */
    private boolean suspect;

    private final @Nullable SubscriptionDisconnects disconnects;

    private ReleaseNotifications(RedisConnectionFactory factory) {
        this.factory = factory;
        this.disconnects = SubscriptionDisconnects.watch(factory, this::interrupted);
    }

    /**
     * Registers an election's release channel, without any I/O; {@link Registration#subscribe} then
     * subscribes.
     *
     * @param ownId releases by this instance id are ignored
     * @param listener told of releases, confirmations and interruptions, on a client thread
     */
    static Registration register(
            RedisConnectionFactory factory,
            String channel,
            String ownId,
            Registration.Listener listener) {
        return register(factory, List.of(channel), ownId, listener);
    }

    /**
     * Registers the release channels of several elections as one registration (subscribed with one
     * command), without any I/O; see {@link #register(RedisConnectionFactory, String, String,
     * Registration.Listener)}.
     */
    static Registration register(
            RedisConnectionFactory factory,
            List<String> channels,
            String ownId,
            Registration.Listener listener) {
        synchronized (byFactory) {
            ReleaseNotifications notifications =
                    byFactory.computeIfAbsent(factory, ReleaseNotifications::new);
            Registration registration =
                    new Registration(
                            notifications,
                            channels,
                            ownId.getBytes(StandardCharsets.UTF_8),
                            listener);
            notifications.registrations.add(registration);
            return registration;
        }
    }

    /**
     * Returns whether a connection factory has been stopped or destroyed (an application closing
     * its context may do that before its electors' subscriptions have finished closing): its client
     * is shut down, so its subscriptions are gone with it and an unsubscribe could only fail.
     */
    static boolean stopped(RedisConnectionFactory factory) {
        return factory instanceof Lifecycle lifecycle && !lifecycle.isRunning();
    }

    private Set<Registration> registered() {
        synchronized (byFactory) {
            return new LinkedHashSet<>(registrations);
        }
    }

    /** Subscribes one registration; see {@link Registration#subscribe}. */
    private void subscribe(Registration registration) {
        synchronized (changes) {
            if (registration.closed || registration.subscribed) {
                return;
            }
            Container current = container;
            // A registration already on the current subscription and not subscribed now has lost
            // it: only a new one helps.
            if (current != null
                    && registration.on != current
                    && !suspect
                    && othersSubscribed(registration)) {
                try {
                    add(current, registration);
                    registration.on = current;
                    registration.confirmed();
                    return;
                } catch (RuntimeException ex) {
                    // The connection may be gone without the client saying so: rebuild next time.
                    suspect = true;
                    throw ex;
                }
            }
            rebuild();
        }
    }

    /**
     * Adds a registration's channels to the subscription in place, waiting at most {@value
     * #ADD_BOUND_MILLIS} ms for their confirmation. The container itself waits for it without a
     * bound: a blocking client (Jedis) whose connection is lost with the SUBSCRIBE unanswered never
     * confirms it, and the wait would hold the changes lock, so every later subscribe and restore,
     * for ever. Past the bound the add goes on in the background (a late confirmation still
     * confirms the registration) and the failure is thrown.
     */
    private static void add(Container current, Registration registration) {
        Member member = new Member(registration, current);
        // Set before the add: a late confirmation counts, and a close removes it.
        registration.member = member;
        CompletableFuture<Void> added = new CompletableFuture<>();
        ADDING.execute(
                () -> {
                    try {
                        current.addMessageListener(member, registration.topics);
                        added.complete(null);
                    } catch (Throwable ex) {
                        added.completeExceptionally(ex);
                    }
                });
        try {
            added.get(ADD_BOUND_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException ex) {
            throw new IllegalStateException(
                    "redlease: the subscription did not confirm the channel within "
                            + ADD_BOUND_MILLIS
                            + " ms",
                    ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("redlease: interrupted while subscribing", ex);
        } catch (ExecutionException ex) {
            Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        }
    }

    /**
     * Returns whether every other registration that has been on a subscription is subscribed now:
     * one that lost it says the connection may be gone. One never subscribed yet (registered
     * alongside, as a newcomer's partitions are) says nothing about the connection.
     */
    private boolean othersSubscribed(Registration registration) {
        for (Registration other : registered()) {
            if (other != registration && !other.subscribed && other.on != null) {
                return false;
            }
        }
        return true;
    }

    /**
     * Subscribes every registered channel on a new connection and, once that succeeded, drops the
     * old one; on failure the old one stays (its client may still restore it) and the failure is
     * thrown. Called holding {@link #changes}.
     */
    private void rebuild() {
        Set<Registration> all = registered();
        Container fresh = new Container();
        Map<Registration, Member> members = new LinkedHashMap<>();
        Map<MessageListener, Collection<? extends Topic>> listeners = new LinkedHashMap<>();
        for (Registration registration : all) {
            Member member = new Member(registration, fresh);
            members.put(registration, member);
            listeners.put(member, registration.topics);
        }
        try {
            // Subscribes every channel at once.
            fresh.setMessageListeners(listeners);
        } catch (RuntimeException ex) {
            Subscription.later(() -> destroy(fresh));
            throw ex;
        }
        Container old = container;
        container = fresh;
        suspect = false;
        if (old != null) {
            Subscription.later(() -> destroy(old));
        }
        for (Registration registration : all) {
            registration.on = fresh;
            Member member = members.get(registration);
            registration.member = member;
            if (registration.closed) {
                // Closed while this subscription was being built (its remove() waits for the
                // lock, and finds it not subscribed): its channels go again.
                if (!removeBounded(member)) {
                    suspect = true;
                }
            } else {
                registration.confirmed();
            }
        }
    }

    private void remove(Registration registration) {
        Container failed = null;
        boolean last;
        synchronized (byFactory) {
            registrations.remove(registration);
            last = registrations.isEmpty();
            if (last) {
                byFactory.remove(factory);
            }
        }
        if (last && disconnects != null) {
            disconnects.stop();
        }
        boolean stopped = stopped(factory);
        synchronized (changes) {
            Container current = container;
            if (current == null) {
                return;
            }
            if (last) {
                container = null;
                if (!stopped) {
                    destroy(current);
                }
            } else {
                // A registration not subscribed now (its connection lost, or its add still going
                // on) keeps its member until the client subscribes it again (see Member): an
                // unsubscribe would wait for a connection that may not come back.
                Member member = registration.member;
                if (!stopped
                        && registration.subscribed
                        && member != null
                        && member.container == current
                        && !removeBounded(member)) {
                    failed = current;
                }
            }
        }
        if (failed != null) {
            Container replaced = failed;
            ADDING.execute(() -> replace(replaced));
        }
    }

    /**
     * Unsubscribes a member's channels, waiting at most {@value #ADD_BOUND_MILLIS} ms: a client
     * whose connection went silent waits for its command timeout (a minute by default), and the
     * caller may hold the changes lock. Returns false if that failed or did not end in time (the
     * unsubscribe goes on in the background); the client then still tracks the channels, and
     * subscribes them again whenever it restores the connection.
     */
    private static boolean removeBounded(Member member) {
        CompletableFuture<Void> removed = new CompletableFuture<>();
        ADDING.execute(
                () -> {
                    try {
                        member.container.removeMessageListener(member, member.registration.topics);
                        removed.complete(null);
                    } catch (Throwable ex) {
                        removed.completeExceptionally(ex);
                    }
                });
        try {
            removed.get(ADD_BOUND_MILLIS, TimeUnit.MILLISECONDS);
            return true;
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException ex) {
            logger.debug("redlease: unsubscribing a closed release channel failed", ex);
            return false;
        }
    }

    /**
     * Replaces the subscription's connection, if it is still {@code failed}, after a closed
     * registration's channels could not be dropped from it (the client tracks them, and would
     * subscribe them again each time it restores that connection): closes it, off the changes lock,
     * and interrupts every registration, whose elections subscribe again on a new connection (see
     * {@link #subscribe}) after their grace for a restore the client can no longer make.
     */
    private void replace(Container failed) {
        synchronized (changes) {
            if (container != failed || stopped(factory)) {
                return;
            }
            // No subscription in use: the next subscribe builds one, and nothing the old one
            // confirms late counts.
            container = null;
            suspect = true;
        }
        // Every registration was on it: each hears at once that it is off, before the close,
        // which may wait for the unsubscribe the drop started.
        interrupted(
                new IllegalStateException(
                        "redlease: the release subscription's connection was replaced, as a"
                                + " closed channel could not be dropped from it"));
        destroy(failed);
    }

    /**
     * Unsubscribes a closed registration's member that its client subscribed again (restoring a
     * lost connection, or finishing an add that went on past its bound), off the client's thread;
     * if that fails or does not end in time, the connection is replaced.
     */
    private void dropLate(Member member) {
        ADDING.execute(
                () -> {
                    synchronized (changes) {
                        if (container != member.container
                                || stopped(factory)
                                || removeBounded(member)) {
                            return;
                        }
                    }
                    replace(member.container);
                });
    }

    private static void destroy(Container container) {
        try {
            container.destroy();
        } catch (Exception ex) {
            logger.debug("redlease: closing the release subscription failed", ex);
        }
    }

    /** The client lost a subscription connection it did not close itself. */
    void interrupted(Throwable cause) {
        for (Registration registration : registered()) {
            registration.interrupted(cause);
        }
    }

    /**
     * One election's release channel (or several elections' channels) on its connection factory's
     * subscription.
     */
    static final class Registration implements MessageListener, SubscriptionListener {

        /** What a registration tells its election, on a client thread. */
        interface Listener {

            /** Another instance released the lease. */
            void released();

            /**
             * Another instance released the lease of the election with this release channel (for a
             * registration of several channels); by default {@link #released()}.
             */
            default void released(byte[] channel) {
                released();
            }

            /**
             * The channel's subscription is in place: subscribed, or restored by the client after a
             * lost connection.
             */
            void subscribed();

            /**
             * The subscription connection was lost (or an established subscription failed); the
             * client may restore it by itself, else a new {@link Registration#subscribe} does.
             */
            void interrupted(Throwable cause);
        }

        private final ReleaseNotifications notifications;

        private final List<ChannelTopic> topics;

        private final Set<ByteBuffer> channels;

        private final byte[] ownId;

        private final Listener listener;

        private volatile boolean subscribed;

        private volatile boolean closed;

        /** The subscription the channel was last added to; guarded by the changes lock. */
        private @Nullable Container on;

        /**
         * What stands for the registration on the subscription its channels were last added to
         * (whether or not that succeeded); guarded by the changes lock.
         */
        private @Nullable Member member;

        Registration(
                ReleaseNotifications notifications,
                List<String> channels,
                byte[] ownId,
                Listener listener) {
            this.notifications = notifications;
            this.topics = channels.stream().map(ChannelTopic::new).toList();
            this.channels = new HashSet<>();
            for (String channel : channels) {
                this.channels.add(ByteBuffer.wrap(channel.getBytes(StandardCharsets.UTF_8)));
            }
            this.ownId = ownId;
            this.listener = listener;
        }

        /**
         * Subscribes the channel, on the factory's current subscription if it is sound, else by
         * building a new one for every registered channel; does nothing if subscribed. Waits for
         * Redis: call it on a subscribing thread.
         *
         * @throws RuntimeException if subscribing failed; call again later
         */
        void subscribe() {
            BiConsumer<String, String> hook = beforeSubscribe;
            if (hook != null) {
                hook.accept(topics.get(0).getTopic(), new String(ownId, StandardCharsets.UTF_8));
            }
            notifications.subscribe(this);
        }

        /** Unsubscribes (waits for Redis); the registration cannot subscribe again. */
        void close() {
            closed = true;
            notifications.remove(this);
        }

        /** Returns whether the channel's subscription is in place, as far as the client tells. */
        boolean subscribed() {
            return subscribed;
        }

        void confirmed() {
            if (!closed) {
                subscribed = true;
                listener.subscribed();
            }
        }

        void interrupted(Throwable cause) {
            if (!closed) {
                subscribed = false;
                listener.interrupted(cause);
            }
        }

        @Override
        public void onMessage(Message message, byte @Nullable [] pattern) {
            if (!Arrays.equals(message.getBody(), ownId)) {
                listener.released(message.getChannel());
            }
        }

        @Override
        public void onChannelSubscribed(byte[] subscribedChannel, long count) {
            if (channels.contains(ByteBuffer.wrap(subscribedChannel))) {
                confirmed();
            }
        }
    }

    /**
     * A registration on one subscription: releases heard on any are passed on, confirmations only
     * from the subscription in use. A subscription that failed to be built can still confirm its
     * channels late, and one being dropped can be restored by its client: neither says the
     * registration is on the one in use (which {@link #rebuild} confirms itself).
     */
    private static final class Member implements MessageListener, SubscriptionListener {

        private final Registration registration;

        private final Container container;

        private final AtomicBoolean dropping = new AtomicBoolean();

        Member(Registration registration, Container container) {
            this.registration = registration;
            this.container = container;
        }

        @Override
        public void onMessage(Message message, byte @Nullable [] pattern) {
            registration.onMessage(message, pattern);
        }

        @Override
        public void onChannelSubscribed(byte[] channel, long count) {
            ReleaseNotifications notifications = registration.notifications;
            if (notifications.container != container) {
                return;
            }
            registration.onChannelSubscribed(channel, count);
            // Read after the confirmation: a close racing it either sees it subscribed (and
            // unsubscribes itself) or is seen here.
            if (registration.closed && dropping.compareAndSet(false, true)) {
                notifications.dropLate(this);
            }
        }
    }

    /**
     * The subscription of one connection. Its failures go back to whoever subscribes, which retries
     * on its own schedule, instead of to Spring Data Redis' own recovery (which retries on the
     * subscribing thread and logs each failure at ERROR with its stack); the failure of an
     * established subscription (a blocking client's connection) is an interruption.
     */
    private final class Container extends RedisMessageListenerContainer {

        /** Set while the container handles a failure on this thread; see {@link #isRunning}. */
        private final ThreadLocal<Boolean> failing = new ThreadLocal<>();

        Container() {
            setConnectionFactory(factory);
            setTaskExecutor(Runnable::run);
            setSubscriptionExecutor(
                    runnable -> ElectorRuntime.daemon(runnable, "redlease-subscription").start());
            setBeanName("redlease-release-notifications");
            afterPropertiesSet();
        }

        @Override
        protected void handleSubscriptionException(
                CompletableFuture<Void> future, BackOffExecution backOff, Throwable cause) {
            boolean established = future.isDone();
            failing.set(Boolean.TRUE);
            try {
                // Closes the connection and fails the attempt; as the container does not look
                // running to it here, it neither retries nor logs.
                super.handleSubscriptionException(future, () -> BackOffExecution.STOP, cause);
            } finally {
                failing.remove();
            }
            if (established && container == this) {
                interrupted(cause);
            }
        }

        /** Returns false to {@link #handleSubscriptionException}, so that it stays quiet. */
        @Override
        public boolean isRunning() {
            return failing.get() == null && super.isRunning();
        }
    }
}
