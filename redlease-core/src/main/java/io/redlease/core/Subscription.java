package io.redlease.core;

import io.redlease.core.ReleaseNotifications.Registration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A run's subscription to its election's release announcements: a follower that hears one tries to
 * acquire at once instead of waiting for its next look at the lease.
 *
 * <p>It keeps trying until it is in place, whatever took it away: Redis down when the run started
 * (retried with a back-off from {@value #FIRST_RETRY_MILLIS} ms up to {@value #MAX_RETRY_MILLIS}
 * ms, and at once when a round trip succeeds again after failing), or a lost subscription
 * connection that the client does not restore within {@value #GRACE_MILLIS} ms (then the
 * subscription is built anew). The first failure of an outage is logged at WARN in one line with
 * its cause (the stack at DEBUG), the return at INFO. Confined to the run's loop, except for the
 * subscribing itself, which waits for Redis on the subscribing threads.
 */
final class Subscription implements Registration.Listener {

    /**
     * Subscribes and unsubscribes, on up to {@value #SUBSCRIBING_THREADS} threads that end when
     * idle: a subscription change that waits for Redis (a refused UNSUBSCRIBE waits for its
     * confirmation) holds up only its own thread.
     */
    static final int SUBSCRIBING_THREADS = 4;

    private static final ThreadPoolExecutor SUBSCRIBING = subscribing();

    static final long FIRST_RETRY_MILLIS = 500;

    static final long MAX_RETRY_MILLIS = 5000;

    /** How long the client may take to restore a lost connection before it is built anew. */
    static final long GRACE_MILLIS = 1000;

    private enum State {
        OFF,
        SUBSCRIBING,
        LISTENING,
        FAILED,
        INTERRUPTED
    }

    private final Campaign campaign;

    private volatile State state = State.OFF;

    /** Why releases are not heard, while not {@link State#LISTENING}. */
    private volatile String off = "the elector is not running";

    // Confined to the loop.

    private @Nullable RedisConnectionFactory factory;

    private @Nullable Registration registration;

    private boolean closed;

    /** Set by {@link #quiesce()}: no more attempts; the registration stays until closed. */
    private boolean quiesced;

    /** The unsubscription begun by {@link #close()}, once it was called. */
    private @Nullable CompletableFuture<Void> unsubscribed;

    private boolean attempting;

    private int failures;

    /** Whether this outage was logged at WARN (its end is then logged at INFO). */
    private boolean warned;

    /** Whether the run's last round trip failed: its next success may mean Redis is back. */
    private boolean roundTripFailed;

    private @Nullable ScheduledFuture<?> retry;

    Subscription(Campaign campaign) {
        this.campaign = campaign;
    }

    /** Subscribes in the background, when announcements are on and the topology allows them. */
    void open(ElectorConfig config) {
        RedisConnectionFactory connections = campaign.elector.connectionFactory();
        if (!config.releaseNotifications()) {
            off("switched off (releaseNotifications is false); followers poll");
            return;
        }
        if (connections == null) {
            off("no RedisConnectionFactory to subscribe with; followers poll");
            return;
        }
        if (isCluster(connections)) {
            off("not used on Redis Cluster; followers poll");
            return;
        }
        factory = connections;
        registration =
                ReleaseNotifications.register(
                        connections,
                        LeaseProtocol.releaseChannel(config.name()),
                        config.instanceId(),
                        this);
        state = State.SUBSCRIBING;
        off = "subscribing";
        campaign.execute(this::attempt);
    }

    private void off(String why) {
        off = why;
        state = State.OFF;
    }

    private static boolean isCluster(RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
    }

    /** Returns whether the run registered for release notifications and has not closed yet. */
    boolean registered() {
        return registration != null;
    }

    /** Returns whether the run's first subscription is being made: not yet in place, not failed. */
    boolean firstSubscribing() {
        return state == State.SUBSCRIBING;
    }

    /** Returns whether releases are being announced to this run. */
    boolean listening() {
        return state == State.LISTENING;
    }

    /** Returns why releases are not announced to this run now, or null while they are. */
    @Nullable String offReason() {
        return state == State.LISTENING ? null : off;
    }

    /** Subscribes (or restores the subscription) on a subscribing thread. On the loop. */
    private void attempt() {
        Registration subscribing = registration;
        if (closed || quiesced || attempting || subscribing == null) {
            return;
        }
        cancelRetry();
        attempting = true;
        SUBSCRIBING.execute(
                () -> {
                    RuntimeException failure = null;
                    try {
                        subscribing.subscribe();
                    } catch (RuntimeException ex) {
                        failure = ex;
                    }
                    RuntimeException failed = failure;
                    campaign.execute(() -> attempted(subscribing, failed));
                });
    }

    private void attempted(Registration subscribing, @Nullable RuntimeException failure) {
        attempting = false;
        if (closed || quiesced || subscribing.subscribed()) {
            // Subscribed: the registration's confirmation has made it listen.
            return;
        }
        if (failure == null) {
            // Subscribed, then interrupted before this ran (no retry was scheduled meanwhile).
            cancelRetry();
            retry = campaign.schedule(this::attempt, TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS));
            return;
        }
        RedisConnectionFactory connections = factory;
        if (connections != null && ReleaseNotifications.stopped(connections)) {
            return; // the application is shutting its Redis client down
        }
        failures++;
        String cause = describe(failure);
        state = State.FAILED;
        off = "cannot subscribe: " + cause + "; followers poll until it succeeds";
        // A follower waiting for its subscription reports itself now; it polls meanwhile.
        campaign.releaseReport();
        if (!warned) {
            warned = true;
            Campaign.logger.warn(
                    "redlease: cannot subscribe to release notifications of '"
                            + campaign.elector.name()
                            + "': "
                            + cause
                            + "; followers poll (as slow as a hand-off without notifications)"
                            + " until a retry succeeds");
        }
        if (Campaign.logger.isDebugEnabled()) {
            Campaign.logger.debug(
                    "redlease: subscribing to release notifications of '"
                            + campaign.elector.name()
                            + "' failed ("
                            + failures
                            + " in a row)",
                    failure);
        }
        long delay = Math.min(MAX_RETRY_MILLIS, FIRST_RETRY_MILLIS << Math.min(failures - 1, 8));
        retry =
                campaign.schedule(
                        this::attempt, Pacing.jitter(TimeUnit.MILLISECONDS.toNanos(delay)));
    }

    /**
     * Makes no more attempts to subscribe (a stopping run that keeps its registration a moment
     * longer, see {@link Campaign#HAND_OFF_SETTLE_NANOS}): a failed subscription is not restored
     * and no outage is logged. On the loop.
     */
    void quiesce() {
        quiesced = true;
        cancelRetry();
    }

    /** Called with the outcome of each of the run's round trips. On the loop. */
    void afterRoundTrip(boolean succeeded) {
        if (!succeeded) {
            roundTripFailed = true;
            return;
        }
        if (roundTripFailed && state == State.FAILED) {
            // Redis answers again: try now rather than at the next back-off.
            attempt();
        }
        roundTripFailed = false;
    }

    @Override
    public void released() {
        campaign.wake();
    }

    @Override
    public void subscribed() {
        campaign.execute(this::onSubscribed);
    }

    private void onSubscribed() {
        if (closed) {
            return;
        }
        state = State.LISTENING;
        failures = 0;
        cancelRetry();
        if (warned) {
            warned = false;
            Campaign.logger.info(
                    "redlease: release notifications of '"
                            + campaign.elector.name()
                            + "' are back");
        }
        // A follower that waited for its subscription reports itself now; a release announced
        // before the subscription took effect was not heard: a follower looks at the lease once
        // more now, unless it is backing off.
        campaign.releaseReport();
        if (!campaign.backingOff()) {
            campaign.wakeOnLoop();
        }
    }

    @Override
    public void interrupted(Throwable cause) {
        campaign.execute(() -> onInterrupted(cause));
    }

    private void onInterrupted(Throwable cause) {
        if (closed || state == State.OFF) {
            return;
        }
        state = State.INTERRUPTED;
        off = "the subscription connection was lost (" + describe(cause) + "); restoring it";
        if (Campaign.logger.isDebugEnabled()) {
            Campaign.logger.debug(
                    "redlease: the release subscription of '"
                            + campaign.elector.name()
                            + "' was interrupted; restoring it unless the client does within "
                            + GRACE_MILLIS
                            + " ms",
                    cause);
        }
        if (!attempting) {
            cancelRetry();
            retry = campaign.schedule(this::attempt, TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS));
        }
    }

    private void cancelRetry() {
        ScheduledFuture<?> pending = retry;
        if (pending != null) {
            pending.cancel(false);
            retry = null;
        }
    }

    /**
     * Stops listening and unsubscribes in the background; a second call returns the first one's
     * unsubscription.
     *
     * @return completed once unsubscribed (or at once when nothing was subscribed): an owner that
     *     waits for it, bounded, before its connection factory may be destroyed keeps the client
     *     from closing the subscription connection twice (Lettuce then logs "Connection is already
     *     closed" at WARN)
     */
    CompletableFuture<Void> close() {
        if (unsubscribed != null) {
            return unsubscribed;
        }
        closed = true;
        off("the elector is not running");
        cancelRetry();
        Registration subscribed = registration;
        if (subscribed == null) {
            unsubscribed = CompletableFuture.completedFuture(null);
            return unsubscribed;
        }
        registration = null;
        // Unsubscribing waits for Redis (for a dead connection, up to the client's command
        // timeout): never on the loop, whose other elections would stall meanwhile.
        CompletableFuture<Void> done = new CompletableFuture<>();
        unsubscribed = done;
        later(
                () -> {
                    closeQuietly(subscribed);
                    done.complete(null);
                });
        return done;
    }

    private static void closeQuietly(Registration subscribed) {
        try {
            subscribed.close();
        } catch (RuntimeException ex) {
            // Nothing to do: the listener is gone either way.
            Campaign.logger.debug("redlease: unsubscribing from release notifications failed", ex);
        }
    }

    /** Runs work that waits for Redis on a subscribing thread. */
    static void later(Runnable work) {
        SUBSCRIBING.execute(work);
    }

    /**
     * Describes a failure in one line: the distinct messages along its causes, outermost first,
     * leaving out wrappers that only repeat their cause and messages another one contains.
     */
    static String describe(Throwable error) {
        List<String> messages = new ArrayList<>();
        Throwable current = error;
        for (int depth = 0; current != null && depth < 10; depth++) {
            Throwable cause = current.getCause();
            String message = current.getMessage();
            if (message != null
                    && !message.isBlank()
                    && (cause == null || !message.equals(cause.toString()))) {
                // One line; the library's own prefix is left to the line that quotes it.
                messages.add(
                        message.replaceAll("\\s+", " ").strip().replaceFirst("^redlease: ", ""));
            }
            current = cause == current ? null : cause;
        }
        List<String> distinct = new ArrayList<>();
        for (String message : messages) {
            boolean contained = false;
            for (String other : messages) {
                if (!other.equals(message) && other.contains(message)) {
                    contained = true;
                    break;
                }
            }
            if (!contained && !distinct.contains(message)) {
                distinct.add(message);
            }
        }
        return distinct.isEmpty() ? error.getClass().getName() : String.join(": ", distinct);
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
}
