package io.redlease.core;

import io.redlease.core.Observer.Operation;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One run of an {@link Elector}: the contend / lead / step-down state machine, from start until
 * stopped.
 *
 * <p>All state is confined to one loop thread, on which every step and every observer callback
 * runs. Redis round trips run on the shared I/O pool; the loop waits for each at most its bound and
 * prefers a reply that arrived in the same instant as the bound ("photo finish").
 */
final class Campaign {

    /**
     * Logs every acquire attempt and renewal at DEBUG, under the logger the Spring Boot integration
     * uses for transitions; transitions themselves go to the observers.
     */
    private static final Log logger = LogFactory.getLog("io.redlease.election");

    private enum Phase {
        SLEEPING,
        ACQUIRING,
        LEADING,
        STEPPING_DOWN,
        STOPPED
    }

    private final Elector elector;

    private final @Nullable LeaderTask task;

    private final ScheduledExecutorService loop;

    private final Executor io;

    private final Observer observer;

    private final LongSupplier clock;

    private final long ttl;

    private final long renewInterval;

    private final long acquireInterval;

    private final long acquireTimeout;

    private final boolean leaseAware;

    private final int ackReplicas;

    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private volatile boolean stopRequested;

    // Confined to the loop thread from here on.

    private Phase phase = Phase.SLEEPING;

    private boolean wasFollower;

    private long backoff;

    private @Nullable ScheduledFuture<?> timer;

    private long callSequence;

    /** The round trip whose reply the loop waits for; 0 when none. */
    private long awaitedCall;

    private @Nullable Lease lease;

    private @Nullable CompletableFuture<?> acquireInFlight;

    private boolean firstAttempt = true;

    /** A release was announced while this follower was not sleeping: retry at once if it lost. */
    private boolean wakeRequested;

    private @Nullable AutoCloseable releaseSubscription;

    private boolean releaseSubscriptionClosed;

    Campaign(Elector elector, @Nullable LeaderTask task, ElectorRuntime runtime) {
        ElectorConfig config = elector.config();
        this.elector = elector;
        this.task = task;
        this.loop = runtime.nextLoop();
        this.io = runtime.io();
        this.observer = elector.observer();
        this.clock = config.clock();
        this.ttl = config.ttl().toNanos();
        this.renewInterval = config.renewInterval().toNanos();
        this.acquireInterval = config.acquireInterval().toNanos();
        this.acquireTimeout = config.acquireTimeout().toNanos();
        this.leaseAware = config.leaseAwareScheduling();
        this.ackReplicas = config.replicaAcknowledgements();
        this.backoff = acquireInterval;
    }

    void start() {
        ElectorConfig config = elector.config();
        RedisConnectionFactory factory = elector.connectionFactory();
        if (config.releaseNotifications() && factory != null && !isCluster(factory)) {
            io.execute(() -> subscribe(factory, config));
        }
        loop.execute(this::attempt);
    }

    private static boolean isCluster(RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
    }

    /** Subscribes to release notifications; runs on the I/O pool since it waits for Redis. */
    private void subscribe(RedisConnectionFactory factory, ElectorConfig config) {
        AutoCloseable subscription;
        try {
            subscription =
                    ReleaseNotifications.subscribe(
                            factory,
                            io,
                            Elector.releaseChannel(config.name()),
                            config.instanceId(),
                            this::wake);
        } catch (RuntimeException ex) {
            // Followers still poll; the failure shows as slower hand-offs only.
            logger.warn(
                    "redlease: cannot subscribe to release notifications of '"
                            + config.name()
                            + "'; this follower takes over by polling instead",
                    ex);
            return;
        }
        loop.execute(
                () -> {
                    if (releaseSubscriptionClosed) {
                        io.execute(() -> closeQuietly(subscription));
                    } else {
                        releaseSubscription = subscription;
                        // A release announced before the subscription took effect was not
                        // heard: a follower looks at the lease once more now, unless it is
                        // backing off after errors.
                        if (backoff == acquireInterval) {
                            wakeOnLoop();
                        }
                    }
                });
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ex) {
            // Nothing to do: the listener is gone either way.
        }
    }

    CompletableFuture<Void> done() {
        return done;
    }

    /** Asks the run to end: the current term steps down, then the run finishes. */
    void requestStop() {
        stopRequested = true;
        loop.execute(this::onStopRequested);
    }

    /** Ends the given term if it is still this run's current one. */
    void resign(Term term) {
        loop.execute(
                () -> {
                    if (lease != null && lease.term == term) {
                        endTerm(StepDownReason.RESIGNED);
                    }
                });
    }

    /** Makes a follower try to acquire now, for example because the lease was released. */
    void wake() {
        loop.execute(this::wakeOnLoop);
    }

    private void wakeOnLoop() {
        if (stopRequested || lease != null) {
            return;
        }
        if (phase == Phase.SLEEPING && timer != null) {
            timer.cancel(false);
            attempt();
        } else if (phase == Phase.ACQUIRING) {
            wakeRequested = true;
        }
    }

    private void onStopRequested() {
        switch (phase) {
            case SLEEPING -> finish();
            case LEADING -> endTerm(StepDownReason.SHUTDOWN);
            default -> {
                // An acquire in flight is awaited (it is bounded) so a win can be released;
                // a step-down in progress finishes the run when it is done.
            }
        }
    }

    // Contending.

    private void attempt() {
        timer = null;
        if (stopRequested) {
            finish();
            return;
        }
        phase = Phase.ACQUIRING;
        if (acquireInFlight != null && !acquireInFlight.isDone()) {
            // The last acquire was abandoned at its bound and still waits for Redis. Sending
            // another could let the two run in either order, the later one minting a newer
            // token behind the term the earlier one starts; wait for it instead.
            onAcquireReply(
                    clock.getAsLong(),
                    null,
                    new QueryTimeoutException(
                            "redlease: the previous acquire of '"
                                    + elector.name()
                                    + "' still has no reply"));
            return;
        }
        long sentAt = clock.getAsLong();
        // The first attempt of a run usually opens the connection too (a cold JVM can take a
        // second): it may take up to the TTL, which stays safe since the term's deadline counts
        // from the send time. Later attempts get the acquire timeout.
        long bound = firstAttempt ? ttl : acquireTimeout;
        firstAttempt = false;
        acquireInFlight =
                call(
                        elector::acquireOnce,
                        bound,
                        "acquire",
                        (reply, error) -> onAcquireReply(sentAt, reply, error));
    }

    private void onAcquireReply(
            long sentAt, Elector.@Nullable AcquireReply reply, @Nullable Throwable error) {
        if (logger.isDebugEnabled()) {
            logger.debug(
                    "redlease: acquire of '"
                            + elector.name()
                            + "' by "
                            + elector.instanceId()
                            + (reply == null
                                    ? " failed: " + error
                                    : reply.token() > 0
                                            ? " won token " + reply.token()
                                            : " lost; the holder's lease has "
                                                    + reply.holderTtlMillis()
                                                    + " ms left"));
        }
        if (reply == null) {
            if (stopRequested) {
                finish();
                return;
            }
            notifyError(Operation.ACQUIRE, error);
            long delay = backoff;
            backoff = Math.min(2 * backoff, ttl);
            sleep(jitter(delay));
            return;
        }
        backoff = acquireInterval;
        if (reply.token() >= Elector.MAX_TOKEN) {
            // Lua compares tokens as doubles: from 2^53 on the fence is no longer exact, and
            // every fenced write of such a term is refused. Do not start it.
            abandonWonTerm(
                    new IllegalStateException(
                            "redlease: the token counter of '"
                                    + elector.name()
                                    + "' reached "
                                    + reply.token()
                                    + ", at or above 2^53; reset <name>:fence and"
                                    + " <name>:fence:applied below it"));
            return;
        }
        if (reply.token() > 0) {
            wasFollower = false;
            wakeRequested = false;
            if (ackReplicas > 0) {
                confirmReplicas(reply.token(), sentAt);
            } else {
                lead(reply.token(), sentAt);
            }
            return;
        }
        if (!wasFollower) {
            wasFollower = true;
            observer.onFollower();
        }
        if (wakeRequested) {
            // The lease was released while this attempt was in flight: try again now.
            wakeRequested = false;
            sleep(0);
        } else {
            sleep(followerDelay(reply.holderTtlMillis()));
        }
    }

    /**
     * Waits for replicas to acknowledge a won term before starting it; a term they did not
     * acknowledge in time is released and reported as an acquire error.
     */
    private void confirmReplicas(long token, long sentAt) {
        call(
                () -> elector.confirmReplicas(token),
                acquireTimeout,
                "replica acknowledgement",
                (acknowledged, error) -> {
                    if (acknowledged != null && acknowledged < 0) {
                        // The renewal found the lease gone or superseded: another term won.
                        sleep(jitter(acquireInterval));
                        return;
                    }
                    if (acknowledged != null && acknowledged >= ackReplicas) {
                        if (stopRequested) {
                            releaseUnstarted();
                        } else {
                            lead(token, sentAt);
                        }
                        return;
                    }
                    Throwable failure =
                            error != null
                                    ? error
                                    : new ReplicaAcknowledgementException(
                                            elector.name(),
                                            token,
                                            acknowledged == null ? 0 : acknowledged,
                                            ackReplicas);
                    abandonWonTerm(failure);
                });
    }

    /**
     * Gives up a won lease without starting its term: reports why as an acquire error, releases the
     * lease and backs off as after a failed acquire.
     */
    private void abandonWonTerm(Throwable why) {
        if (!stopRequested) {
            notifyError(Operation.ACQUIRE, why);
        }
        long delay = backoff;
        backoff = Math.min(2 * backoff, ttl);
        call(
                elector::releaseOnce,
                renewInterval,
                "release",
                (released, releaseError) -> sleep(jitter(delay)));
    }

    /** Releases a won term that never started because the run is stopping. */
    private void releaseUnstarted() {
        call(elector::releaseOnce, renewInterval, "release", (released, error) -> finish());
    }

    /**
     * Returns how long a follower waits: until the holder's lease lapses when that is sooner and
     * lease-aware scheduling is on, else a jittered acquire interval.
     */
    private long followerDelay(long holderTtlMillis) {
        if (leaseAware && holderTtlMillis >= 0) {
            long lapse = TimeUnit.MILLISECONDS.toNanos(holderTtlMillis + 1);
            if (lapse < acquireInterval) {
                return lapse;
            }
        }
        return jitter(acquireInterval);
    }

    private void sleep(long delay) {
        if (stopRequested) {
            finish();
            return;
        }
        phase = Phase.SLEEPING;
        timer = loop.schedule(this::attempt, delay, TimeUnit.NANOSECONDS);
    }

    // Leading.

    private void lead(long token, long acquiredAt) {
        phase = Phase.LEADING;
        Lease lease = new Lease(new Term(elector, token, clock, acquiredAt + ttl), acquiredAt);
        this.lease = lease;
        elector.publish(lease.term);
        observer.onElected(token);
        if (stopRequested) {
            // Won in the same instant the run was stopped: release at once.
            endTerm(StepDownReason.SHUTDOWN);
            return;
        }
        if (task != null) {
            startTask(lease, task);
        }
        lease.holdStart = clock.getAsLong();
        renew(lease);
    }

    private void startTask(Lease lease, LeaderTask task) {
        lease.taskRunning = true;
        Term term = lease.term;
        Thread thread =
                ElectorRuntime.daemon(
                        () -> {
                            Throwable failure = null;
                            if (term.bind(Thread.currentThread())) {
                                BoundTerms.push(term);
                                try {
                                    task.lead(term);
                                } catch (Throwable ex) {
                                    failure = ex;
                                } finally {
                                    BoundTerms.pop();
                                    term.unbind(Thread.currentThread());
                                }
                            }
                            Throwable failed = failure;
                            loop.execute(() -> onTaskEnded(lease, failed));
                        },
                        "redlease-leader-" + elector.name() + "-" + term.token());
        thread.start();
    }

    private void onTaskEnded(Lease lease, @Nullable Throwable failure) {
        lease.taskRunning = false;
        if (!lease.ending) {
            if (failure != null) {
                notifyError(Operation.TASK, failure);
            }
            endTerm(failure == null ? StepDownReason.TASK_ENDED : StepDownReason.TASK_FAILED);
        } else if (this.lease == lease && phase == Phase.STEPPING_DOWN) {
            release(lease);
        }
    }

    private void renew(Lease lease) {
        timer = null;
        if (this.lease != lease || lease.ending) {
            return;
        }
        long sentAt = clock.getAsLong();
        long budget = ttl - (sentAt - lease.lastRenewal);
        if (budget <= 0) {
            endTerm(StepDownReason.EXPIRED);
            return;
        }
        long token = lease.term.token();
        call(
                () -> elector.renewOnce(token),
                Math.min(renewInterval, budget),
                "renew",
                (extended, error) -> onRenewReply(lease, sentAt, extended, error));
    }

    private void onRenewReply(
            Lease lease, long sentAt, @Nullable Boolean extended, @Nullable Throwable error) {
        if (logger.isDebugEnabled()) {
            logger.debug(
                    "redlease: renewal of '"
                            + elector.name()
                            + "' term "
                            + lease.term.token()
                            + (extended == null
                                    ? " failed: " + error
                                    : extended ? " extended the lease" : " found the lease lost"));
        }
        if (extended == null) {
            notifyError(Operation.RENEW, error);
        } else if (!extended) {
            endTerm(StepDownReason.LOST);
            return;
        } else {
            // The lease lapses at Redis no earlier than TTL after this request was sent.
            lease.lastRenewal = sentAt;
            lease.term.renewed(sentAt + ttl);
        }
        scheduleRenewal(lease);
    }

    /**
     * Waits for the next renewal tick or the step-down deadline, whichever comes first. Ticks fall
     * on a fixed grid from the start of the term; one that passed during the last round trip fires
     * at once, older ones are dropped.
     */
    private void scheduleRenewal(Lease lease) {
        long now = clock.getAsLong();
        long deadline = lease.lastRenewal + ttl;
        if (now - deadline >= 0) {
            endTerm(StepDownReason.EXPIRED);
            return;
        }
        long nextTick = lease.holdStart + (lease.ticks + 1) * renewInterval;
        if (nextTick - now <= 0) {
            lease.ticks = (now - lease.holdStart) / renewInterval;
            renew(lease);
            return;
        }
        long wakeAt = nextTick - deadline < 0 ? nextTick : deadline;
        timer = loop.schedule(() -> onHoldTimer(lease), wakeAt - now, TimeUnit.NANOSECONDS);
    }

    private void onHoldTimer(Lease lease) {
        timer = null;
        if (this.lease != lease || lease.ending) {
            return;
        }
        long now = clock.getAsLong();
        if (now - (lease.lastRenewal + ttl) >= 0) {
            endTerm(StepDownReason.EXPIRED);
            return;
        }
        lease.ticks = Math.max(lease.ticks + 1, (now - lease.holdStart) / renewInterval);
        renew(lease);
    }

    // Stepping down.

    private void endTerm(StepDownReason reason) {
        Lease lease = this.lease;
        if (lease == null || lease.ending) {
            return;
        }
        lease.ending = true;
        lease.reason = reason;
        awaitedCall = 0;
        cancelTimer();
        elector.unpublish(lease.term);
        lease.term.end(reason);
        phase = Phase.STEPPING_DOWN;
        if (!lease.taskRunning) {
            release(lease);
        }
    }

    private void release(Lease lease) {
        call(
                elector::releaseOnce,
                renewInterval,
                "release",
                (released, error) -> {
                    if (error != null) {
                        notifyError(Operation.RELEASE, error);
                    }
                    steppedDown(lease);
                });
    }

    private void steppedDown(Lease lease) {
        this.lease = null;
        observer.onSteppedDown(lease.reason);
        if (stopRequested) {
            finish();
        } else {
            sleep(jitter(acquireInterval));
        }
    }

    private void finish() {
        if (phase == Phase.STOPPED) {
            return;
        }
        phase = Phase.STOPPED;
        awaitedCall = 0;
        cancelTimer();
        releaseSubscriptionClosed = true;
        AutoCloseable subscription = releaseSubscription;
        if (subscription != null) {
            releaseSubscription = null;
            io.execute(() -> closeQuietly(subscription));
        }
        elector.recordRoundTrip(null);
        elector.runEnded(this);
        done.complete(null);
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    // Bounded round trips.

    /**
     * Runs a Redis round trip on the I/O pool and hands its outcome to {@code next} on the loop:
     * the reply, or the failure, or a {@link QueryTimeoutException} when no reply came within the
     * bound. A reply that completed by the time the bound fires wins over the timeout.
     */
    private <T> CompletableFuture<T> call(
            Supplier<T> roundTrip,
            long timeoutNanos,
            String what,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        long id = ++callSequence;
        awaitedCall = id;
        CompletableFuture<T> reply = CompletableFuture.supplyAsync(roundTrip, io);
        ScheduledFuture<?> bound =
                loop.schedule(
                        () -> deliver(id, reply, timeoutNanos, what, next),
                        timeoutNanos,
                        TimeUnit.NANOSECONDS);
        reply.whenComplete(
                (value, error) ->
                        loop.execute(
                                () -> {
                                    bound.cancel(false);
                                    deliver(id, reply, timeoutNanos, what, next);
                                }));
        return reply;
    }

    private <T> void deliver(
            long id,
            CompletableFuture<T> reply,
            long timeoutNanos,
            String what,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        if (awaitedCall != id) {
            return;
        }
        awaitedCall = 0;
        T value = null;
        Throwable failure = null;
        if (!reply.isDone()) {
            failure =
                    new QueryTimeoutException(
                            "redlease: "
                                    + what
                                    + " of '"
                                    + elector.name()
                                    + "' got no reply within "
                                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                                    + "ms");
        } else {
            try {
                value = reply.getNow(null);
            } catch (CompletionException ex) {
                failure = ex.getCause() != null ? ex.getCause() : ex;
            } catch (CancellationException ex) {
                failure = ex;
            }
        }
        elector.recordRoundTrip(failure);
        next.accept(failure == null ? value : null, failure);
    }

    private void notifyError(Operation operation, @Nullable Throwable error) {
        if (error != null) {
            observer.onError(operation, error);
        }
    }

    /** Shortens a delay by a random amount of up to 10 %, never lengthens it. */
    static long jitter(long nanos) {
        return nanos - ThreadLocalRandom.current().nextLong(nanos / 10 + 1);
    }

    /** The loop's state of one term. */
    private static final class Lease {

        final Term term;

        /** Send time of the last request that extended the lease (initially the acquire). */
        long lastRenewal;

        long holdStart;

        /** Index of the last renewal tick consumed, counted from {@link #holdStart}. */
        long ticks;

        boolean taskRunning;

        boolean ending;

        StepDownReason reason = StepDownReason.SHUTDOWN;

        Lease(Term term, long acquiredAt) {
            this.term = term;
            this.lastRenewal = acquiredAt;
        }
    }
}
