package io.redlease.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The run an {@link Elector} has at most one of at a time, and what it publishes: the term it leads
 * and the outcome of its last round trip. Starts a run, waits for it and asks it to stop, for the
 * elector's public methods.
 */
final class RunControl {

    private final Elector elector;

    private final ElectorConfig config;

    private final Lane lane;

    private final ElectorRuntime runtime;

    private final AtomicReference<@Nullable Campaign> campaign = new AtomicReference<>();

    /** The failure of the loop's last round trip, or null when it succeeded. */
    private volatile @Nullable Throwable redisFailure;

    private volatile @Nullable Term current;

    /** The stop of the last run that finished; completed once nothing of it is left. */
    private volatile CompletableFuture<Void> ending = CompletableFuture.completedFuture(null);

    /** The last term the run led, kept after it ended: its fencers stay bound by its deadline. */
    private volatile @Nullable Term last;

    /** What this run's last acquire attempt saw of another holder's lease; reset per run. */
    private volatile LeaseSighting sighting = LeaseSighting.NONE;

    RunControl(Elector elector, ElectorConfig config, Lane lane, ElectorRuntime runtime) {
        this.elector = elector;
        this.config = config;
        this.lane = lane;
        this.runtime = runtime;
    }

    /** Returns the term the run leads, or null when not leading. */
    @Nullable Term current() {
        return current;
    }

    /** Returns the last term led, even if it has ended, or null if none. */
    @Nullable Term last() {
        return last;
    }

    boolean running() {
        return campaign.get() != null;
    }

    @Nullable Throwable redisFailure() {
        return redisFailure;
    }

    void start(@Nullable LeaderTask task) {
        begin(task).start();
    }

    /** Contends on the calling thread until interrupted or stopped; see {@link Elector#run}. */
    void run(@Nullable LeaderTask task) {
        Campaign run = begin(task);
        if (Thread.currentThread().isInterrupted()) {
            // Never started: there is no stop to wait for.
            campaign.compareAndSet(run, null);
            return;
        }
        run.start();
        try {
            run.done().get();
        } catch (InterruptedException ex) {
            stopAsync(config.drainTimeout());
            awaitUninterruptibly(run.done());
            Thread.currentThread().interrupt();
        } catch (ExecutionException ex) {
            throw new IllegalStateException("redlease: run failed", ex.getCause());
        }
    }

    void resign() {
        Campaign run = campaign.get();
        Term term = current;
        if (run != null && term != null) {
            run.resign(term);
        }
    }

    /**
     * Stops and waits, unless called from the elector's own threads; see {@link Elector#stop()}.
     */
    boolean stop(Duration drainTimeout) throws InterruptedException {
        CompletableFuture<Void> stopped = stopAsync(drainTimeout);
        // Inside a step (on a loop thread, or inline on the thread of its event, running what a
        // term's end or a completed future runs there), the run's next steps wait for this one.
        if (ElectorRuntime.onLoopThread() || Steps.inStep() || onOwnThread()) {
            return stopped.isDone();
        }
        try {
            // The run ends after the drain, the release (bounded by the renew interval) and the
            // last callback (bounded by a short grace): this wait only guards against a defect.
            stopped.get(drainTimeout.toNanos() + 2 * config.ttl().toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException ex) {
            return false;
        } catch (ExecutionException ex) {
            return true;
        }
    }

    CompletableFuture<Void> stopAsync(Duration drainTimeout) {
        if (drainTimeout == null || drainTimeout.isNegative()) {
            throw new IllegalArgumentException(
                    "redlease: drainTimeout must not be null or negative");
        }
        Campaign run = campaign.get();
        if (run == null) {
            // The last run may have finished while its stop still closes its subscription: a stop
            // now waits for that too (an application may destroy its Redis client next).
            return ending;
        }
        if (!run.stopRequested()) {
            run.requestStop(drainTimeout.toNanos());
        }
        return run.done();
    }

    /**
     * Asks the run to stop and returns a future for the caller: the run's end completes it on a
     * step's thread (a loop thread, a client's I/O thread), so the caller's dependents run on the
     * engine's callback pool instead, where a blocking {@code stop()} of another elector waits.
     */
    CompletableFuture<Void> stopAsyncForCaller(Duration drainTimeout) {
        CompletableFuture<Void> stopped = stopAsync(drainTimeout);
        return stopped.isDone()
                ? stopped.copy()
                : stopped.thenApplyAsync(ignored -> null, ElectorRuntime.callbacks());
    }

    /**
     * Returns the current run's first outcome; see {@link Elector#firstOutcome()}. A step of the
     * run completes it, maybe on a client's I/O thread ({@link Campaign#executeNow}): the caller's
     * dependents run on the engine's callback pool instead, never on a loop or client thread.
     */
    CompletableFuture<Boolean> firstOutcome() {
        Campaign run = campaign.get();
        if (run == null) {
            return CompletableFuture.completedFuture(false);
        }
        CompletableFuture<Boolean> first = run.firstOutcome();
        if (first.isDone()) {
            return first.copy();
        }
        // The engine's callback pool, which adds a thread while callbacks block: an
        // application's executor could hold the outcome behind its own work.
        return first.thenApplyAsync(outcome -> outcome, ElectorRuntime.callbacks());
    }

    /** Returns why releases are not announced to this elector now, or null while they are. */
    @Nullable String notificationsOff() {
        Campaign run = campaign.get();
        return run == null ? "the elector is not running" : run.subscription.offReason();
    }

    /** Returns whether the run follows, hears release announcements and sleeps until its look. */
    boolean idleFollower() {
        Campaign run = campaign.get();
        return run != null && run.idleFollower();
    }

    /** Returns whether no step of the run is running or handed to the loop thread. */
    boolean stepsIdle() {
        Campaign run = campaign.get();
        return run == null || run.stepsIdle();
    }

    /** Returns the loop thread's executor of the current run, or null when not running. */
    @Nullable ScheduledExecutorService loop() {
        Campaign run = campaign.get();
        return run == null ? null : run.loop;
    }

    // Run bookkeeping, called by the campaign on its loop thread.

    void recordRoundTrip(@Nullable Throwable failure) {
        redisFailure = failure;
    }

    /** Records what an acquire attempt saw: another holder's lease valid until then, or nothing. */
    void leaseSeen(boolean seen, long until) {
        sighting = seen ? new LeaseSighting(true, until) : LeaseSighting.NONE;
    }

    boolean leaseHeld() {
        if (current != null) {
            return true;
        }
        LeaseSighting seen = sighting;
        return running() && seen.seen() && config.clock().getAsLong() - seen.until() < 0;
    }

    void publish(Term term) {
        last = term;
        current = term;
    }

    void unpublish(Term term) {
        if (current == term) {
            current = null;
        }
    }

    /** Called by a run as it finishes, before its stop has completed; see {@link #stopAsync}. */
    void runEnded(Campaign run) {
        if (campaign.compareAndSet(run, null)) {
            sighting = LeaseSighting.NONE;
            ending = run.done();
        }
    }

    private Campaign begin(@Nullable LeaderTask task) {
        Campaign run = new Campaign(elector, task, runtime);
        if (!campaign.compareAndSet(null, run)) {
            throw new IllegalStateException(
                    "redlease: Run called concurrently on the same Elector; use one Elector per"
                            + " Run");
        }
        // A new run has not looked yet: what the last one saw says nothing about the lease now.
        sighting = LeaseSighting.NONE;
        return run;
    }

    /** Whether the calling thread works for this elector: its task, a bound call, a callback. */
    private boolean onOwnThread() {
        return BoundTerms.of(elector) != null || lane.isCurrentThread();
    }

    private static void awaitUninterruptibly(CompletableFuture<Void> future) {
        boolean interrupted = false;
        while (true) {
            try {
                future.get();
                break;
            } catch (InterruptedException ex) {
                interrupted = true;
            } catch (ExecutionException ex) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Another holder's lease as an acquire attempt saw it, valid until {@code until} (the config
     * clock): one value, so a reader never pairs one attempt's flag with another's deadline.
     */
    private record LeaseSighting(boolean seen, long until) {

        static final LeaseSighting NONE = new LeaseSighting(false, 0);
    }
}
