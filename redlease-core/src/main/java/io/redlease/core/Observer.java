package io.redlease.core;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Callbacks for an elector's role transitions and handled errors.
 *
 * <p>Every method has a no-op default, so an observer overrides only what it needs. The role and
 * error callbacks of one elector are invoked one at a time, in order, on that elector's own lane
 * over {@link ElectorConfig#callbackExecutor()}: never concurrently with each other, and never on
 * the threads that acquire, renew and release. A slow callback delays only the later callbacks of
 * the same elector, never a renewal or another elector. {@link #onFencedWrite} is the exception: it
 * runs on the thread that made the write.
 *
 * <p>Per term the order is {@code onElected → onError(RENEW)* → onError(RELEASE)? → onSteppedDown};
 * between terms, {@code onError(ACQUIRE)*} and at most one {@code onFollower} per transition into
 * the follower role. An observer that throws is logged at WARN and does not disturb the election or
 * the other observers.
 */
public interface Observer {

    /**
     * Called once per won term, before the leader task starts; the first renewal does not wait for
     * it.
     *
     * @param token the term's fencing token, greater than every earlier term's
     */
    default void onElected(long token) {}

    /**
     * Called once per term after it ended: after the leader task returned (or the drain timeout
     * passed without it) and the lease was released (or the release failed and was reported). Also
     * called on the final step-down when the elector stops. The default calls {@link
     * #onSteppedDown()}.
     *
     * @param reason why the term ended
     */
    default void onSteppedDown(StepDownReason reason) {
        onSteppedDown();
    }

    /** Called once per term after it ended; see {@link #onSteppedDown(StepDownReason)}. */
    default void onSteppedDown() {}

    /**
     * Called when an acquire attempt finds the lease held by another instance: once after the
     * elector starts and again only after a term this instance won. A follower whose release
     * subscription is still being made reports itself once the subscription is in place (so that it
     * hears the next release), has failed, or the connect timeout has passed; a term won meanwhile
     * comes without it. The default calls {@link #onFollower()}.
     *
     * @param holder the instance id of the lease's holder (a Go instance's too), as the attempt
     *     read it; null when the lease was free but this instance held back for a live candidate
     *     that ranks higher (see {@link Preference})
     */
    default void onFollower(@Nullable String holder) {
        onFollower();
    }

    /** Called when this instance becomes a follower; see {@link #onFollower(String)}. */
    default void onFollower() {}

    /**
     * Called for an error the elector handled: a failed or timed-out acquire, renewal or release,
     * or a leader task that threw. The default calls {@link #onError(Throwable)}.
     *
     * @param operation what failed
     * @param error the failure; Redis failures are Spring {@code DataAccessException}s, a round
     *     trip the elector stopped waiting for is a {@code QueryTimeoutException}
     */
    default void onError(Operation operation, Throwable error) {
        onError(error);
    }

    /** Called for an error the elector handled; see {@link #onError(Operation, Throwable)}. */
    default void onError(Throwable error) {}

    /**
     * Called after each fenced write that reached a verdict, on the writing thread.
     *
     * @param applied whether the write was applied; false means the token was stale
     */
    default void onFencedWrite(boolean applied) {}

    /**
     * Called after each fenced write that reached a verdict, on the writing thread, with the time
     * it took (zero when a token below 1 was refused without a round trip). The default calls
     * {@link #onFencedWrite(boolean)}.
     *
     * @param applied whether the write was applied; false means the token was stale
     * @param duration how long the write took, round trip included
     */
    default void onFencedWrite(boolean applied, Duration duration) {
        onFencedWrite(applied);
    }

    /**
     * Called after each of the engine's round trips to Redis: an acquire (and a replica
     * acknowledgement, as part of acquiring), a renewal or a release, with how long it took; one
     * the engine stopped waiting for counts as failed, with the time it waited. Each request sent
     * is reported once: a renewal still in flight at the next renew tick is waited for again, not
     * sent again, and is reported when its reply comes (with the whole time since its send), or as
     * failed once its term has ended without it and a renew interval has passed since its send.
     * Delivered in order with the other callbacks.
     *
     * @param operation the round trip's operation
     * @param duration from sending the request to the reply, the failure, the bound or the end of
     *     the term that gave it up
     * @param succeeded whether a reply came (a refusal, such as a lost lease, is a reply)
     */
    default void onRoundTrip(Operation operation, Duration duration, boolean succeeded) {}

    /**
     * Combines observers into one that notifies each in turn, isolating their failures.
     *
     * @param observers the observers, in notification order
     * @return the combined observer
     */
    static Observer composite(List<? extends Observer> observers) {
        return new CompositeObserver(List.copyOf(observers));
    }

    /** What an elector was doing when an error occurred. */
    enum Operation {
        /** Trying to win the lease. */
        ACQUIRE,
        /** Extending the lease as leader. */
        RENEW,
        /** Deleting the lease after a term. */
        RELEASE,
        /** Running the leader task, which threw. */
        TASK,
        /** The engine's own step, which failed unexpectedly (a defect, logged at ERROR). */
        INTERNAL
    }
}
