package io.redlease.core;

import io.redlease.core.Observer.Operation;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One run of an {@link Elector}: the contend / lead / step-down state machine, from start until
 * stopped.
 *
 * <p>All state is confined to the run's loop: its steps run one at a time and run no user code
 * (observer callbacks go to the election's {@link Lane}, the leader task to a thread of its own). A
 * step runs on the run's loop thread, or, for the events on a graceful hand-off's path (a stop with
 * nothing in flight, a release heard, the reply of the acquire it sent, the leader task's return),
 * at once on the thread that brings the event when no other step of the run is running or waiting
 * ({@link #executeNow}): the hop to the loop thread would be a thread wake-up on that path.
 * Everything else goes to the loop threads, so that thousands of elections sharing one client
 * connection never pile their work onto its one I/O thread. Redis round trips are futures bounded
 * by {@link RoundTrips}. A run first opens its connection, then contends ({@link Contending}) and
 * leads ({@link Leadership}). Every step runs guarded: a throwable that escapes one ends the term
 * ({@link StepDownReason#INTERNAL_ERROR}), is logged at ERROR and reported, and the run contends
 * again. Stopping is bounded: see {@link #requestStop}.
 */
final class Campaign {

    static final Log logger = LogFactory.getLog("io.redlease.election");

    /**
     * How long a run whose stop released its lease keeps its release subscription after the
     * release. Unsubscribing (and, for the last election on a connection factory, closing the
     * subscription's connection) runs code and round trips of its own: done alongside the release,
     * it competed for the CPU with the release itself and, on a shared host, with the successor
     * taking over (1.4 ms at p50 on a 2-core machine, docs/benchmarks.md). The stop returns this
     * much later; a run without a subscription (release notifications off) does not wait.
     */
    static final long HAND_OFF_SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private enum Phase {
        SLEEPING,
        CONNECTING,
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

    /**
     * How long a run whose stop ended its term keeps its release subscription after the release.
     */
    private final long handOffSettle;

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

    private final Contending contending;

    /** Runs the run's steps one at a time, on the loop thread or inline. */
    private final Steps steps;

    /**
     * Completed once the run has a first outcome: true when it won a term (published by then),
     * false when it follows, its first attempt failed, or it stopped.
     */
    private final CompletableFuture<Boolean> firstOutcome = new CompletableFuture<>();

    // Confined to the loop from here on.

    private volatile Phase phase = Phase.SLEEPING;

    private @Nullable ScheduledFuture<?> timer;

    /**
     * Whether the stop ended this run's term: its release subscription is closed {@link
     * #HAND_OFF_SETTLE_NANOS} after the release, not alongside it; see {@link #finish}.
     */
    private boolean handingOff;

    /** A release was announced while this follower was not sleeping: retry at once if it lost. */
    private boolean wakeRequested;

    /**
     * The follower's report (its {@code onFollower} and first outcome), held while its release
     * subscription is still being made; see {@link #reportFollower}.
     */
    private @Nullable Runnable heldReport;

    private @Nullable ScheduledFuture<?> heldReportTimer;

    /**
     * When a held follower report goes out at the latest: the connect timeout after the run's
     * start, which the connection and the subscription are both made within (System.nanoTime).
     */
    private long reportDeadline;

    final Subscription subscription;

    Campaign(Elector elector, @Nullable LeaderTask task, ElectorRuntime runtime) {
        this.config = elector.config();
        this.elector = elector;
        this.protocol = elector.protocol();
        this.task = task;
        this.loop = runtime.nextLoop();
        this.steps = new Steps(loop, this::internalError);
        this.handOffSettle = runtime.handOffSettleNanos();
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
        this.contending = new Contending(this, config);
        this.subscription = new Subscription(this);
    }

    void start() {
        reportDeadline = System.nanoTime() + config.connectTimeout().toNanos();
        // As a step: a stop that came as the run was published has finished the run, and a run
        // that has finished must not register for release notifications.
        steps.exclusively(
                () -> {
                    if (phase != Phase.STOPPED) {
                        subscription.open(config);
                    }
                });
        execute(this::attempt);
    }

    CompletableFuture<Void> done() {
        return stopping.done();
    }

    /** Returns the run's first outcome; see {@link Elector#firstOutcome()}. */
    CompletableFuture<Boolean> firstOutcome() {
        return firstOutcome;
    }

    CallGate gate() {
        return stopping.gate();
    }

    RoundTrips roundTrips() {
        return roundTrips;
    }

    WonTerms wonTerms() {
        return wonTerms;
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

    /**
     * Releases a lease won by an acquire whose reply came after it was given up, and that no term
     * holds (token-checked: only while the lease is still this instance's at that token). Nobody
     * waits for it.
     */
    void releaseUnheld(long token, String why) {
        CompletableFuture<Boolean> reply;
        try {
            reply = protocol.release(token);
        } catch (RuntimeException ex) {
            logger.debug(
                    "redlease: the lease of '" + elector.name() + "' won late was not released",
                    ex);
            return;
        }
        reply.whenComplete(
                (released, error) -> {
                    if (logger.isDebugEnabled()) {
                        logger.debug(
                                "redlease: the lease of '"
                                        + elector.name()
                                        + "' won by an acquire "
                                        + why
                                        + (error == null
                                                ? (Boolean.TRUE.equals(released)
                                                        ? " was released"
                                                        : " was no longer this instance's")
                                                : " could not be released: " + error));
                    }
                });
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

    /** Runs a step on the loop thread; see {@link Steps#execute}. */
    void execute(Runnable step) {
        steps.execute(step);
    }

    /**
     * Runs a step at once on the calling thread when the run is idle, else after the others; see
     * {@link Steps#executeNow}.
     */
    void executeNow(Runnable step) {
        steps.executeNow(step);
    }

    /** Returns whether no step is running or handed to the loop thread (timers aside). */
    boolean stepsIdle() {
        return steps.idle();
    }

    /** Schedules a step on the loop thread; see {@link Steps#schedule}. */
    ScheduledFuture<?> schedule(Runnable step, long delayNanos) {
        return steps.schedule(step, delayNanos);
    }

    /** Returns the run's steps, for this package's tests. */
    Steps steps() {
        return steps;
    }

    /** Asks the run to end; see {@link Stopping#request}. */
    void requestStop(long drainNanos) {
        stopping.request(drainNanos);
    }

    /** Called by stopping, once, to end the run: what ends it depends on the phase. */
    void onStopRequested() {
        switch (phase) {
            case SLEEPING, CONNECTING -> finish();
            case LEADING -> {
                handingOff = true;
                subscription.quiesce();
                leadership.endTerm(StepDownReason.SHUTDOWN);
            }
            default -> {
                // An acquire in flight is awaited (it is bounded) so a win can be released;
                // a step-down in progress finishes the run when it is done, its wait for the
                // task or hooks ending by the stop's deadline.
                leadership.stopRequestedWhileSteppingDown();
            }
        }
        if (!handingOff) {
            // A stopping run contends no more: it unsubscribes now.
            subscription.close();
        }
    }

    /** Ends the given term if it is still this run's current one. */
    void resign(Term term) {
        execute(() -> leadership.resign(term));
    }

    /**
     * Makes a follower try to acquire now, because the lease was released: on the calling thread
     * (the subscription's) when the loop is idle; see {@link #executeNow}.
     */
    void wake() {
        executeNow(() -> wakeOnLoop(true));
    }

    /** Makes a follower look at the lease now, for example once its subscription is in place. */
    void wakeOnLoop() {
        wakeOnLoop(false);
    }

    private void wakeOnLoop(boolean releaseHeard) {
        if (stopRequested() || leadership.leading()) {
            return;
        }
        if (phase == Phase.SLEEPING && timer != null) {
            timer.cancel(false);
            attempt(releaseHeard);
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

    /** Returns whether the run sleeps until its next look, not leading and not stopping. */
    boolean sleepingFollower() {
        return phase == Phase.SLEEPING && !stopRequested() && !leadership.leading();
    }

    // Contending: the attempts themselves, and what their replies mean, are in Contending.

    private void attempt() {
        attempt(false);
    }

    /**
     * Connects or sends an acquire; one sent because a release was heard has its reply handled at
     * once on the thread that brings it ({@link RoundTrips#callNow}).
     */
    private void attempt(boolean releaseHeard) {
        timer = null;
        if (stopRequested()) {
            finish();
            return;
        }
        if (!contending.connected()) {
            phase = Phase.CONNECTING;
            contending.connect();
            return;
        }
        phase = Phase.ACQUIRING;
        contending.acquire(releaseHeard);
    }

    /** The connection is open: the first acquire goes out at once. */
    void onConnected() {
        if (stopRequested()) {
            finish();
        } else {
            attempt();
        }
    }

    /**
     * An acquire failed or got no reply, or the connection before it could not be opened in time:
     * report it, back off and retry.
     */
    void onAcquireFailed(@Nullable Throwable error) {
        if (stopRequested()) {
            finish();
            return;
        }
        elector.leaseSeen(false, 0);
        notifyError(Operation.ACQUIRE, error);
        sleep(pacing.afterError());
    }

    /** An acquire won a term with this token, sent at {@code sentAt}. */
    void onWon(long token, long sentAt) {
        phase = Phase.ACQUIRING;
        wakeRequested = false;
        wonTerms.start(token, sentAt);
    }

    /** Another instance holds the lease for {@code holderTtlMillis} more (negative: held back). */
    void onLost(long holderTtlMillis) {
        if (wakeRequested) {
            // The lease was released while this attempt was in flight: try again now.
            wakeRequested = false;
            sleep(0);
        } else {
            sleep(pacing.followerDelay(holderTtlMillis, subscription.listening()));
        }
    }

    /**
     * Reports this run a follower: at once, unless its release subscription is still being made;
     * then once it is in place (so that a follower that reports itself hears the next release),
     * fails, or the connect timeout since the run's start has passed, whichever comes first. A term
     * won meanwhile drops the report. On the loop.
     */
    void reportFollower(Runnable report) {
        long left = reportDeadline - System.nanoTime();
        if (!subscription.firstSubscribing() || left <= 0) {
            report.run();
            return;
        }
        heldReport = report;
        heldReportTimer = schedule(this::releaseReport, left);
    }

    /** Delivers a held follower report, if any. On the loop. */
    void releaseReport() {
        Runnable report = heldReport;
        dropReport();
        if (report != null && !leadership.leading() && phase != Phase.STOPPED) {
            report.run();
            firstOutcome.complete(false);
        }
    }

    private void dropReport() {
        heldReport = null;
        ScheduledFuture<?> pending = heldReportTimer;
        if (pending != null) {
            pending.cancel(false);
            heldReportTimer = null;
        }
    }

    void sleep(long delay) {
        if (heldReport == null) {
            firstOutcome.complete(false);
        }
        if (stopRequested()) {
            finish();
            return;
        }
        phase = Phase.SLEEPING;
        timer = schedule(this::attempt, delay);
    }

    // Leading and stepping down: the term's own state lives in Leadership.

    void lead(long token, long acquiredAt) {
        dropReport();
        phase = Phase.LEADING;
        leadership.lead(token, acquiredAt);
        firstOutcome.complete(true);
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
            contending.giveUp();
            roundTrips.forget();
            if (leadership.leading()) {
                leadership.endTerm(StepDownReason.INTERNAL_ERROR);
            } else if (leadership.steppingDown()) {
                leadership.stepDownAfterError();
            } else if (stopRequested()) {
                finish();
            } else {
                sleep(pacing.afterError());
            }
        } catch (Throwable again) {
            logger.error("redlease: recovery of '" + elector.name() + "' failed", again);
            long wait = leadership.forget();
            if (wait >= 0) {
                sleep(wait);
            }
        }
    }

    void finish() {
        if (phase == Phase.STOPPED) {
            return;
        }
        phase = Phase.STOPPED;
        dropReport();
        firstOutcome.complete(false);
        cancelTimer();
        roundTrips.forget();
        // The settle is for the subscription's close: without one the stop ends now.
        boolean settle = handingOff && subscription.registered();
        CompletableFuture<Void> unsubscribed = settle ? closeAfterHandOff() : subscription.close();
        elector.recordRoundTrip(null);
        elector.runEnded(this);
        stopping.finished(unsubscribed, settle ? handOffSettle : 0);
    }

    /** Closes the release subscription once the successor has had time to take over. */
    private CompletableFuture<Void> closeAfterHandOff() {
        CompletableFuture<Void> closed = new CompletableFuture<>();
        schedule(
                () -> {
                    try {
                        subscription
                                .close()
                                .whenComplete((ignored, error) -> closed.complete(null));
                    } catch (RuntimeException ex) {
                        closed.complete(null);
                        throw ex;
                    }
                },
                handOffSettle);
        return closed;
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
