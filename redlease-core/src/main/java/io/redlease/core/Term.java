package io.redlease.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * One leadership term of an {@link Elector}: its fencing token, a {@link Fencer} for it, and
 * whether it is still active.
 *
 * <p>A term is <em>active</em> from its election until it ends (lease lost or not renewed in time,
 * task returned or threw, resignation, elector stopped) and only while it is before its local
 * deadline: the time to live after the send of the last renewal that succeeded, by the elector's
 * clock. Nothing leader-only starts in a term that is not active, on any path ({@link #execute},
 * {@link #executeAsync}, {@link #executeReactive}, a nested call, a {@code @LeaderOnly} call, a
 * partition run, a once-per-slot run, a leader-only lifecycle start): a start past the deadline is
 * refused as one after the term ended is, and ends the term as an expiry (the elector's watchdog
 * would, a moment later). When it ends, every thread running work for it (the {@link LeaderTask}'s
 * thread, and a {@code @LeaderOnly} call in progress) is interrupted, and its fencer's writes are
 * refused without a call once its deadline has passed.
 *
 * <p>Being active is advisory: the lease may lapse at Redis a moment before this instance notices
 * (a pause between a check and the work it admits cannot be ruled out), which is why writes go
 * through the {@link #fencer()}.
 */
public final class Term {

    private static final Log logger = LogFactory.getLog("io.redlease.election");

    private final Elector elector;

    private final CallGate gate;

    private final long token;

    private final Fencer fencer;

    private final CountDownLatch ended = new CountDownLatch(1);

    private final CompletableFuture<StepDownReason> whenEnded = new CompletableFuture<>();

    /** What runs when the term ends; each removes itself when its work is over first. */
    private final Set<Runnable> endActions = ConcurrentHashMap.newKeySet();

    private final List<Thread> boundThreads = new ArrayList<>(2);

    private final LongSupplier clock;

    private volatile @Nullable StepDownReason endReason;

    /** Local step-down deadline: time to live after the last successful renewal's send time. */
    private volatile long deadline;

    private volatile long renewals;

    private volatile long endedAt;

    /** Ends the term as an expiry, on the elector's watchdog loop, once it is past its deadline. */
    private final Runnable expire;

    /**
     * The deadline {@link #expire} was last asked for: asked once per deadline, again if a late
     * renewal moved the deadline before the watchdog loop got to it.
     */
    private final AtomicLong expiryAskedFor = new AtomicLong(Long.MIN_VALUE);

    Term(
            Elector elector,
            CallGate gate,
            long token,
            LongSupplier clock,
            long deadline,
            Runnable expire) {
        this.elector = elector;
        this.gate = gate;
        this.token = token;
        this.clock = clock;
        this.deadline = deadline;
        this.expire = expire;
        this.fencer =
                new Fencer(elector.fencedWrites(), elector.observer(), elector.name(), token, this);
    }

    /** Returns the term's fencing token, greater than every earlier term's. */
    public long token() {
        return token;
    }

    /** Returns a fencer bound to this term's token. */
    public Fencer fencer() {
        return fencer;
    }

    /**
     * Returns a reactive fencer bound to this term's token, over a reactive connection of the
     * elector's connection factory.
     *
     * @throws IllegalStateException if the elector was built without a reactive connection factory
     */
    public ReactiveFencer reactiveFencer() {
        return elector.reactiveFencer(this);
    }

    /** Returns the elector that won this term. */
    Elector elector() {
        return elector;
    }

    /**
     * Returns whether the term is active: it has not ended, as far as this instance knows, and its
     * local deadline (the time to live after the send of the last successful renewal) has not
     * passed. A term found past its deadline is ended as an expiry, as the elector's watchdog
     * would.
     */
    public boolean isActive() {
        if (endReason != null) {
            return false;
        }
        if (!pastDeadline()) {
            return true;
        }
        expireSoon();
        return false;
    }

    /** Has the watchdog loop end the term, which is past its deadline; once per deadline. */
    private void expireSoon() {
        long current = deadline;
        if (expiryAskedFor.getAndSet(current) != current) {
            try {
                expire.run();
            } catch (RuntimeException ex) {
                // The watchdog's own timer still ends the term.
                logger.warn("redlease: could not end " + this + " at its deadline at once", ex);
            }
        }
    }

    /**
     * Returns how long this instance may still lead without another successful renewal: the time to
     * live counted from the send time of the last renewal that succeeded. Zero once the term ended.
     */
    public Duration remaining() {
        long left = deadline - clock.getAsLong();
        return isActive() && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /** Returns why the term ended, or empty while it is active. */
    public Optional<StepDownReason> endReason() {
        return Optional.ofNullable(endReason);
    }

    /**
     * Returns a stage that completes, with the reason, when the term ends. Actions added to it stay
     * until then: for work that may finish first, prefer {@link #executeReactive} or {@link
     * #executeAsync}, which end with the term and leave nothing behind.
     */
    public CompletionStage<StepDownReason> whenEnded() {
        return whenEnded.minimalCompletionStage();
    }

    /**
     * Blocks until the term ends.
     *
     * @throws InterruptedException when the waiting thread is interrupted, which for the leader
     *     task's own thread is how the end of the term arrives
     */
    public void awaitEnd() throws InterruptedException {
        ended.await();
    }

    /**
     * Blocks until the term ends or the timeout passes.
     *
     * @return whether the term ended
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public boolean awaitEnd(Duration timeout) throws InterruptedException {
        return ended.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Runs work on the calling thread as part of this term, and interrupts the thread if the term
     * ends meanwhile; see {@link #execute(Callable, boolean)}.
     */
    public <T> T execute(Callable<T> work) throws Exception {
        return execute(work, true);
    }

    /**
     * Runs work on the calling thread as part of this term. During the call {@link
     * LeadershipContext} answers for this term, and stopping the elector waits for the call to
     * return (up to its drain timeout) before it ends the term and releases the lease. This is what
     * {@code @LeaderOnly} does around a method.
     *
     * <p>A call made where this term is already bound to the thread (from the leader task, or from
     * another call in this term) runs inside the outer one: it registers no interrupt of its own,
     * and stopping waits for the outermost call only. It is the innermost term again during the
     * call, even when work of another election's term was bound in between.
     *
     * @param work the work; its {@code toString()} names it in the WARN of a forced stop
     * @param interruptOnEnd whether to interrupt the thread if the term ends during the call; the
     *     outermost call on the thread clears that interrupt again when it returns
     * @return what the work returned
     * @throws TermEndedException if the term is not {@linkplain #isActive() active} (it has ended
     *     or passed its deadline; a nested call too) or, outside a call of the term, the elector is
     *     stopping; the work did not run
     * @throws Exception what the work threw
     */
    public <T> T execute(Callable<T> work, boolean interruptOnEnd) throws Exception {
        if (BoundTerms.isBound(this)) {
            if (!isActive()) {
                throw notActive();
            }
            return BoundTerms.reenter(this, work);
        }
        CallGate.Entry entry = gate.enter(String.valueOf(work));
        if (entry == null) {
            throw notActive();
        }
        try {
            BoundTerms.Frame frame = BoundTerms.bind(this, interruptOnEnd);
            if (frame == null) {
                throw notActive();
            }
            try {
                return work.call();
            } finally {
                BoundTerms.unbind(frame);
            }
        } finally {
            gate.exit(entry);
        }
    }

    /**
     * Runs reactive work as part of this term, once per subscription. At subscription the work's
     * publisher is obtained with the term bound to the subscribing thread; the subscription carries
     * the term in its Reactor {@code Context} (and, with Micrometer context propagation, in the
     * thread-local state of every operator), so {@link LeadershipContext} answers for this term
     * throughout; stopping the elector waits for the subscription, as for a call of {@link
     * #execute}.
     *
     * @param cancelOnEnd whether the end of the term cancels the subscription, which then fails
     *     with a {@link TermEndedException}; otherwise it runs on, and its fenced writes are
     *     refused once a newer term exists
     * @return the work's signals; a subscription made when the term is not {@linkplain #isActive()
     *     active} (it has ended or passed its deadline) fails with a {@link TermEndedException} and
     *     does not obtain the publisher
     */
    public <T> Flux<T> executeReactive(Supplier<? extends Publisher<T>> work, boolean cancelOnEnd) {
        return TermWork.reactive(this, gate, work, cancelOnEnd);
    }

    /**
     * Runs asynchronous work as part of this term: the call that starts it runs on the calling
     * thread as {@link #execute(Callable, boolean)} does, and the term stays in it until the
     * returned stage completes; stopping the elector waits for that (up to its drain timeout).
     *
     * @param cancelOnEnd whether the end of the term cancels the returned stage when it is a {@link
     *     java.util.concurrent.Future} (the work stops where it honours cancellation)
     * @return what the work returned
     * @throws TermEndedException if the term is not {@linkplain #isActive() active} (it has ended
     *     or passed its deadline) or the elector is stopping; the work did not run
     * @throws Exception what the call threw
     */
    public <T, S extends CompletionStage<T>> @Nullable S executeAsync(
            Callable<S> work, boolean cancelOnEnd) throws Exception {
        return TermWork.async(this, gate, work, cancelOnEnd);
    }

    /**
     * Runs an action when the term ends, at once if it has ended.
     *
     * @return what removes the action again, once it is no longer needed
     */
    Runnable onEnd(Runnable action) {
        endActions.add(action);
        if (endReason != null && endActions.remove(action)) {
            action.run();
        }
        return () -> endActions.remove(action);
    }

    TermEndedException notActive() {
        return new TermEndedException(this);
    }

    /**
     * Registers a thread to be interrupted when the term ends; returns false, without registering,
     * when the term is not active.
     */
    boolean bind(Thread thread) {
        if (!isActive()) {
            return false;
        }
        synchronized (boundThreads) {
            if (endReason != null) {
                return false;
            }
            boundThreads.add(thread);
            return true;
        }
    }

    /**
     * Unregisters a thread. Returns whether the term ended while it was bound, in which case the
     * thread was (or is about to have been) interrupted for it.
     */
    boolean unbind(Thread thread) {
        synchronized (boundThreads) {
            boundThreads.remove(thread);
            return endReason != null;
        }
    }

    /** Returns whether the local step-down deadline has passed, by the elector's clock. */
    boolean pastDeadline() {
        return clock.getAsLong() - deadline >= 0;
    }

    /** Records a successful renewal that moved the step-down deadline. */
    void renewed(long newDeadline) {
        deadline = newDeadline;
        renewals++;
    }

    /** Returns how many renewals succeeded in this term. */
    long renewals() {
        return renewals;
    }

    /** Returns when the term ended, on the elector's clock; 0 while it is active. */
    long endedAtNanos() {
        return endedAt;
    }

    /** Returns the local step-down deadline, on the elector's clock. */
    long deadlineNanos() {
        return deadline;
    }

    /** Ends the term and interrupts the threads bound to it; false if it had already ended. */
    boolean end(StepDownReason reason) {
        RuntimeException clockFailure = null;
        synchronized (boundThreads) {
            if (endReason != null) {
                return false;
            }
            endReason = reason;
            try {
                endedAt = clock.getAsLong();
            } catch (RuntimeException ex) {
                // Thrown once the term's work has been told of the end.
                clockFailure = ex;
            }
            for (Thread thread : boundThreads) {
                thread.interrupt();
            }
        }
        ended.countDown();
        for (Runnable action : endActions) {
            if (endActions.remove(action)) {
                try {
                    action.run();
                } catch (RuntimeException ex) {
                    // An end action cancels work; a failure there must not stop the others.
                    logger.warn("redlease: ending work of " + this + " failed", ex);
                }
            }
        }
        whenEnded.complete(reason);
        if (clockFailure != null) {
            throw clockFailure;
        }
        return true;
    }

    @Override
    public String toString() {
        return "Term["
                + elector.name()
                + ", token="
                + token
                + ", active="
                + (endReason == null && !pastDeadline())
                + "]";
    }
}
