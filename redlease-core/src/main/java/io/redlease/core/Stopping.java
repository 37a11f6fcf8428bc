package io.redlease.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Stopping one {@link Campaign}: closes the run's {@link CallGate}, gives the calls in flight until
 * the drain timeout to return, then has the campaign end the run; {@link #done()} completes once
 * the observers have heard the run's last callback.
 */
final class Stopping {

    private final Campaign campaign;

    private final Leadership leadership;

    private final Lane lane;

    private final CallGate gate = new CallGate();

    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private volatile boolean requested;

    /** When stopping stops waiting for work in flight, by {@link System#nanoTime()}. */
    private volatile long deadline;

    /** Whether the run has begun to end; confined to the loop. */
    private boolean begun;

    Stopping(Campaign campaign, Leadership leadership, Lane lane) {
        this.campaign = campaign;
        this.leadership = leadership;
        this.lane = lane;
    }

    CallGate gate() {
        return gate;
    }

    CompletableFuture<Void> done() {
        return done;
    }

    boolean requested() {
        return requested;
    }

    long deadline() {
        return deadline;
    }

    /**
     * Asks the run to end. Calls in flight in the term get until the drain timeout to return (none
     * is admitted meanwhile); then the term ends, which interrupts the leader task and the calls
     * still running, the lease is released and the run finishes. See {@link Leadership#endTerm}.
     */
    void request(long drainNanos) {
        deadline = System.nanoTime() + drainNanos;
        requested = true;
        gate.close();
        if (gate.drained().isDone()) {
            // Nothing in flight: the run begins to end on the calling thread when its loop is
            // idle, so that the release goes out without a hop to the loop thread.
            campaign.executeNow(this::begin);
            return;
        }
        ScheduledFuture<?> timeout = campaign.schedule(this::onDrainDeadline, drainNanos);
        gate.drained()
                .thenRun(
                        () -> {
                            timeout.cancel(false);
                            campaign.execute(this::begin);
                        });
    }

    private void onDrainDeadline() {
        for (String call : gate.describeInFlight()) {
            Campaign.logger.warn(
                    "redlease: stopping '"
                            + campaign.elector.name()
                            + "' after its drain timeout; interrupting "
                            + call
                            + ", still running in term "
                            + leadership.token());
        }
        begin();
    }

    /** Has the campaign end the run, once. */
    private void begin() {
        if (begun) {
            return;
        }
        begun = true;
        campaign.onStopRequested();
    }

    /** Notes that the campaign has begun to end the run itself: a term won as the stop came. */
    void begunByCampaign() {
        begun = true;
    }

    /**
     * Completes {@link #done()} once the observers have heard the run's last callback and the run's
     * subscription is closed, or at the stop deadline (with a short grace) if a callback holds the
     * lane. Waiting for the subscription keeps its connection's close ahead of whatever the
     * application shuts down after its electors (its Redis client); it gets one renew interval from
     * the start of the close (which a run that handed off its lease puts off by {@code
     * closeDelayNanos}), as the release does, so a Redis that does not answer never holds the stop
     * longer.
     */
    void finished(CompletableFuture<Void> unsubscribed, long closeDelayNanos) {
        CompletableFuture<Void> heard = new CompletableFuture<>();
        lane.submit("stopped", () -> heard.complete(null));
        long grace = Math.max(deadline - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(100));
        CompletableFuture<Void> closed = unsubscribed.copy();
        campaign.loop.schedule(
                () -> closed.complete(null),
                closeDelayNanos + Math.min(campaign.renewInterval, grace),
                TimeUnit.NANOSECONDS);
        CompletableFuture.allOf(heard, closed)
                .whenComplete((ignored, error) -> done.complete(null));
        campaign.loop.schedule(
                () -> {
                    if (done.complete(null) && !heard.isDone()) {
                        Campaign.logger.warn(
                                "redlease: '"
                                        + campaign.elector.name()
                                        + "' stopped while an observer callback still runs");
                    }
                },
                closeDelayNanos + grace,
                TimeUnit.NANOSECONDS);
    }
}
