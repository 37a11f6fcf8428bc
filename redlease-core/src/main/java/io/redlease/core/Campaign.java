package io.redlease.core;

import io.redlease.core.LeaseProtocol.AcquireReply;
import io.redlease.core.Observer.Operation;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.QueryTimeoutException;

/**
 * One run of an {@link Elector}: the contend / lead / step-down state machine, from start until
 * stopped.
 *
 * <p>All state is confined to one loop thread, which runs no user code: observer callbacks go to
 * the election's {@link Lane}, the leader task to a thread of its own. Redis round trips are
 * futures bounded by {@link RoundTrips}. Every step runs guarded: a throwable that escapes one ends
 * the term ({@link StepDownReason#INTERNAL_ERROR}), is logged at ERROR and reported, and the run
 * contends again. Stopping is bounded: see {@link #requestStop}.
 */
final class Campaign {

    static final Log logger = LogFactory.getLog("io.redlease.election");

    private enum Phase {
        SLEEPING,
        ACQUIRING,
        LEADING,
        STEPPING_DOWN,
        STOPPED
    }

    final Elector elector;

    final LeaseProtocol protocol;

    final ScheduledExecutorService loop;

    final long ttl;

    final long renewInterval;

    final long acquireInterval;

    final long acquireTimeout;

    private final @Nullable LeaderTask task;

    private final Lane lane;

    private final Observer observer;

    private final ElectorConfig config;

    final Pacing pacing;

    private final WonTerms wonTerms;

    private final RoundTrips roundTrips;

    private final Leadership leadership;

    private final Stopping stopping;

    // Confined to the loop thread from here on.

    private volatile Phase phase = Phase.SLEEPING;

    private boolean wasFollower;

    private @Nullable ScheduledFuture<?> timer;

    private @Nullable CompletableFuture<?> acquireInFlight;

    private boolean firstAttempt = true;

    /** A release was announced while this follower was not sleeping: retry at once if it lost. */
    private boolean wakeRequested;

    final Subscription subscription;

    Campaign(Elector elector, @Nullable LeaderTask task, ElectorRuntime runtime) {
        this.config = elector.config();
        this.elector = elector;
        this.protocol = elector.protocol();
        this.task = task;
        this.loop = runtime.nextLoop();
        this.lane = elector.lane();
        this.observer = elector.observer();
        this.ttl = config.ttl().toNanos();
        this.renewInterval = config.renewInterval().toNanos();
        this.acquireInterval = config.acquireInterval().toNanos();
        this.acquireTimeout = config.acquireTimeout().toNanos();
        this.pacing = new Pacing(config);
        this.wonTerms = new WonTerms(this, config);
        this.roundTrips = new RoundTrips(this);
        this.leadership = new Leadership(this, runtime.otherLoop(loop), config);
        this.stopping = new Stopping(this, leadership, lane);
        this.subscription = new Subscription(this);
    }

    void start() {
        subscription.open(config);
        execute(this::attempt);
    }

    CompletableFuture<Void> done() {
        return stopping.done();
    }

    CallGate gate() {
        return stopping.gate();
    }

    RoundTrips roundTrips() {
        return roundTrips;
    }

    /**
     * Releases the lease of the given term, bounded by the renew interval, and hands the outcome to
     * {@code next} on the loop: null, or the failure.
     */
    void release(long token, Consumer<@Nullable Throwable> next) {
        roundTrips.call(
                () -> protocol.release(token),
                renewInterval,
                true,
                Operation.RELEASE,
                "release",
                (released, error) -> next.accept(error));
    }

    @Nullable LeaderTask task() {
        return task;
    }

    boolean stopRequested() {
        return stopping.requested();
    }

    long stopDeadline() {
        return stopping.deadline();
    }

    /** Runs a step on the loop, guarded. */
    void execute(Runnable step) {
        loop.execute(() -> guarded(step));
    }

    /** Schedules a step on the loop, guarded. */
    ScheduledFuture<?> schedule(Runnable step, long delayNanos) {
        return loop.schedule(() -> guarded(step), delayNanos, TimeUnit.NANOSECONDS);
    }

    private void guarded(Runnable step) {
        try {
            step.run();
        } catch (Throwable ex) {
            if (ex instanceof VirtualMachineError error) {
                throw error;
            }
            internalError(ex);
        }
    }

    /** Asks the run to end; see {@link Stopping#request}. */
    void requestStop(long drainNanos) {
        stopping.request(drainNanos);
    }

    /** Called by stopping, once, to end the run: what ends it depends on the phase. */
    void onStopRequested() {
        switch (phase) {
            case SLEEPING -> finish();
            case LEADING -> leadership.endTerm(StepDownReason.SHUTDOWN);
            default -> {
                // An acquire in flight is awaited (it is bounded) so a win can be released;
                // a step-down in progress finishes the run when it is done.
            }
        }
    }

    /** Ends the given term if it is still this run's current one. */
    void resign(Term term) {
        execute(() -> leadership.resign(term));
    }

    /** Makes a follower try to acquire now, for example because the lease was released. */
    void wake() {
        execute(this::wakeOnLoop);
    }

    void wakeOnLoop() {
        if (stopRequested() || leadership.leading()) {
            return;
        }
        if (phase == Phase.SLEEPING && timer != null) {
            timer.cancel(false);
            attempt();
        } else if (phase == Phase.ACQUIRING) {
            wakeRequested = true;
        }
    }

    /** Returns whether this run follows, sleeps until its next look and hears releases. */
    boolean idleFollower() {
        return phase == Phase.SLEEPING && subscription.listening() && !leadership.leading();
    }

    /** Whether a follower may take the subscription's arrival as a cue to look at the lease. */
    boolean backingOff() {
        return pacing.backingOff();
    }

    // Contending.

    private void attempt() {
        timer = null;
        if (stopRequested()) {
            finish();
            return;
        }
        phase = Phase.ACQUIRING;
        if (acquireInFlight != null && !acquireInFlight.isDone()) {
            // The last acquire was abandoned at its bound and still waits for Redis. Sending
            // another could let the two run in either order, the later one minting a newer
            // token behind the term the earlier one starts; wait for it instead.
            onAcquireReply(
                    config.clock().getAsLong(),
                    null,
                    new QueryTimeoutException(
                            "redlease: the previous acquire of '"
                                    + elector.name()
                                    + "' still has no reply"));
            return;
        }
        long sentAt = config.clock().getAsLong();
        // The first attempt of a run usually opens the connection too (a cold JVM can take a
        // second): it may take up to the TTL, which stays safe since the term's deadline counts
        // from the send time. Later attempts get the acquire timeout.
        long bound = firstAttempt ? ttl : acquireTimeout;
        firstAttempt = false;
        acquireInFlight =
                roundTrips.call(
                        protocol::acquire,
                        bound,
                        false,
                        Operation.ACQUIRE,
                        "acquire",
                        (reply, error) -> onAcquireReply(sentAt, reply, error));
    }

    private void onAcquireReply(
            long sentAt, @Nullable AcquireReply reply, @Nullable Throwable error) {
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
            if (stopRequested()) {
                finish();
                return;
            }
            elector.leaseSeen(false, 0);
            notifyError(Operation.ACQUIRE, error);
            sleep(pacing.afterError());
            return;
        }
        pacing.reset();
        if (reply.token() >= LeaseProtocol.MAX_TOKEN) {
            wonTerms.tokenExhausted(reply.token());
            return;
        }
        if (reply.token() > 0) {
            wasFollower = false;
            wakeRequested = false;
            wonTerms.start(reply.token(), sentAt);
            return;
        }
        // Another instance's lease, valid for holderTtl more from the send (a negative one is a
        // free lease that preference holds back); the next look is due when it lapses, so it
        // counts as seen for one acquire timeout more, while that look is on its way.
        long holderTtl = reply.holderTtlMillis();
        elector.leaseSeen(
                holderTtl >= 0,
                sentAt + TimeUnit.MILLISECONDS.toNanos(Math.max(holderTtl, 0)) + acquireTimeout);
        if (!wasFollower) {
            wasFollower = true;
            notify("onFollower", observer::onFollower);
        }
        if (wakeRequested) {
            // The lease was released while this attempt was in flight: try again now.
            wakeRequested = false;
            sleep(0);
        } else {
            sleep(pacing.followerDelay(reply.holderTtlMillis(), subscription.listening()));
        }
    }

    void sleep(long delay) {
        if (stopRequested()) {
            finish();
            return;
        }
        phase = Phase.SLEEPING;
        timer = schedule(this::attempt, delay);
    }

    // Leading and stepping down: the term's own state lives in Leadership.

    void lead(long token, long acquiredAt) {
        phase = Phase.LEADING;
        leadership.lead(token, acquiredAt);
        if (stopRequested()) {
            // Won in the same instant the run was stopped: release at once.
            stopping.begunByCampaign();
            leadership.endTerm(StepDownReason.SHUTDOWN);
        }
    }

    /** Called by the leadership once the term has ended, before its lease is released. */
    void onSteppingDown() {
        phase = Phase.STEPPING_DOWN;
        cancelTimer();
        roundTrips.forget();
    }

    /** Called by the leadership after the term's lease was released (or the release failed). */
    void onSteppedDown() {
        if (stopRequested()) {
            finish();
        } else {
            sleep(pacing.poll());
        }
    }

    /** Handles a throwable that escaped a step: ends the term, if any, and contends again. */
    void internalError(Throwable error) {
        logger.error(
                "redlease: internal error in the election loop of '"
                        + elector.name()
                        + "'; ending the term, if any, and contending again",
                error);
        notifyError(Operation.INTERNAL, error);
        try {
            cancelTimer();
            roundTrips.forget();
            if (leadership.leading()) {
                leadership.endTerm(StepDownReason.INTERNAL_ERROR);
            } else if (leadership.steppingDown()) {
                leadership.abandonRelease();
            } else if (stopRequested()) {
                finish();
            } else {
                sleep(pacing.afterError());
            }
        } catch (Throwable again) {
            logger.error("redlease: recovery of '" + elector.name() + "' failed", again);
            leadership.forget();
            loop.schedule(() -> guarded(this::attempt), acquireInterval, TimeUnit.NANOSECONDS);
        }
    }

    void finish() {
        if (phase == Phase.STOPPED) {
            return;
        }
        phase = Phase.STOPPED;
        cancelTimer();
        roundTrips.forget();
        subscription.close();
        elector.recordRoundTrip(null);
        elector.runEnded(this);
        stopping.finished();
    }

    void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** Hands a callback to the election's lane. */
    void notify(String what, Runnable callback) {
        lane.submit(what, callback);
    }

    void notifyError(Operation operation, @Nullable Throwable error) {
        if (error != null) {
            notify("onError", () -> observer.onError(operation, error));
        }
    }
}
