package io.redlease.core;

import io.redlease.core.Observer.Operation;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The leading half of a run: one term at a time, from election through renewals to its release.
 * Confined to the run's loop, except for the watchdog.
 *
 * <p>The watchdog runs on another loop: when the local deadline (time to live after the last
 * successful renewal's send) passes and the term is still active, it ends the term there and then,
 * whatever the run's own loop is doing, and the loop releases the lease when it gets to it.
 *
 * <p>When a term ends, its leader task is interrupted and the lease is released once the task has
 * returned, or once the drain timeout has passed (a WARN names the task thread): a task that
 * ignores interrupts cannot hold the lease, and its late fenced writes are refused once a successor
 * is elected.
 */
final class Leadership {

    private final Campaign campaign;

    private final ScheduledExecutorService watchdogLoop;

    private final LongSupplier clock;

    private final long drainTimeout;

    private final List<BeforeRelease> beforeRelease;

    private @Nullable Lease lease;

    Leadership(Campaign campaign, ScheduledExecutorService watchdogLoop, ElectorConfig config) {
        this.campaign = campaign;
        this.watchdogLoop = watchdogLoop;
        this.clock = config.clock();
        this.drainTimeout = config.drainTimeout().toNanos();
        this.beforeRelease = config.beforeRelease();
    }

    boolean leading() {
        return lease != null && !lease.ending;
    }

    boolean steppingDown() {
        return lease != null && lease.ending;
    }

    /** Returns the current term's token, or 0. */
    long token() {
        return lease == null ? 0 : lease.term.token();
    }

    void lead(long token, long acquiredAt) {
        Elector elector = campaign.elector;
        Lease lease = new Lease(acquiredAt);
        lease.term =
                new Term(
                        elector,
                        campaign.gate(),
                        token,
                        clock,
                        acquiredAt + campaign.ttl,
                        () -> watchdogLoop.execute(() -> guardedExpire(lease)));
        this.lease = lease;
        elector.publish(lease.term);
        campaign.notify("onElected", () -> elector.observer().onElected(token));
        LeaderTask task = campaign.task();
        if (task != null) {
            lease.taskRunning = true;
            // Started from the lane, so the task begins after onElected was delivered.
            campaign.notify("start leader task", () -> startTask(lease, task));
        }
        lease.holdStart = clock.getAsLong();
        watch(lease);
        renew(lease);
    }

    private void startTask(Lease lease, LeaderTask task) {
        Term term = lease.term;
        Thread thread =
                ElectorRuntime.daemon(
                        () -> {
                            Throwable failure = null;
                            BoundTerms.Frame frame = BoundTerms.bind(term, true);
                            if (frame != null) {
                                try {
                                    task.lead(term);
                                } catch (Throwable ex) {
                                    failure = ex;
                                } finally {
                                    BoundTerms.unbind(frame);
                                }
                            }
                            Throwable failed = failure;
                            // The release a stop waits for goes out from here when the loop is
                            // idle: the task has returned and this thread runs nothing else.
                            campaign.executeNow(() -> onTaskEnded(lease, failed));
                        },
                        "redlease-leader-" + campaign.elector.name() + "-" + term.token());
        lease.taskThread = thread;
        thread.start();
    }

    private void onTaskEnded(Lease lease, @Nullable Throwable failure) {
        lease.taskRunning = false;
        if (!lease.ending) {
            if (failure != null) {
                campaign.notifyError(Operation.TASK, failure);
            }
            // A task refused at its start because the term was past its deadline ends it so.
            endTerm(
                    failure != null
                            ? StepDownReason.TASK_FAILED
                            : lease.term.pastDeadline()
                                    ? StepDownReason.EXPIRED
                                    : StepDownReason.TASK_ENDED);
        } else if (this.lease == lease && lease.awaitingTask && lease.hooksPending <= 0) {
            release(lease);
        }
    }

    void resign(Term term) {
        if (lease != null && lease.term == term) {
            endTerm(StepDownReason.RESIGNED);
        }
    }

    // Renewing.

    /**
     * Sends a renewal, bounded by the renew interval and the time left. A renewal that got no reply
     * within its bound is not sent again while it is still in flight: the next tick waits for the
     * same one (while Redis stalls, one renewal per term queues up, not one per tick), and its
     * reply still counts, from its own send time, if it comes before the deadline. Its round trip
     * is reported once, when the reply comes or the term gives it up, with the time since its send.
     */
    private void renew(Lease lease) {
        if (this.lease != lease || lease.ending) {
            return;
        }
        long now = clock.getAsLong();
        long budget = campaign.ttl - (now - lease.lastRenewal);
        if (budget <= 0) {
            endTerm(StepDownReason.EXPIRED);
            return;
        }
        RoundTrips.@Nullable InFlight<Boolean> pending = lease.pendingRenewal;
        if (pending == null || pending.isDone()) {
            long token = lease.term.token();
            pending =
                    campaign.roundTrips()
                            .send(() -> campaign.protocol.renew(token), Operation.RENEW);
            lease.pendingRenewal = pending;
            lease.pendingSentAt = now;
        }
        long sentAt = lease.pendingSentAt;
        campaign.roundTrips()
                .await(
                        pending,
                        Math.min(campaign.renewInterval, budget),
                        "renew",
                        (extended, error) -> onRenewReply(lease, sentAt, extended, error));
    }

    private void onRenewReply(
            Lease lease, long sentAt, @Nullable Boolean extended, @Nullable Throwable error) {
        if (Campaign.logger.isDebugEnabled()) {
            Campaign.logger.debug(
                    "redlease: renewal of '"
                            + campaign.elector.name()
                            + "' term "
                            + lease.term.token()
                            + (extended == null
                                    ? " failed: " + error
                                    : extended ? " extended the lease" : " found the lease lost"));
        }
        if (extended == null) {
            campaign.notifyError(Operation.RENEW, error);
        } else if (!extended) {
            endTerm(StepDownReason.LOST);
            return;
        } else {
            // The lease lapses at Redis no earlier than TTL after this request was sent.
            lease.lastRenewal = sentAt;
            lease.term.renewed(sentAt + campaign.ttl);
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
        long deadline = lease.lastRenewal + campaign.ttl;
        if (now - deadline >= 0) {
            endTerm(StepDownReason.EXPIRED);
            return;
        }
        long interval = campaign.renewInterval;
        long nextTick = lease.holdStart + (lease.ticks + 1) * interval;
        if (nextTick - now <= 0) {
            lease.ticks = (now - lease.holdStart) / interval;
            renew(lease);
            return;
        }
        long wakeAt = nextTick - deadline < 0 ? nextTick : deadline;
        lease.timer = campaign.schedule(() -> onHoldTimer(lease), wakeAt - now);
    }

    private void onHoldTimer(Lease lease) {
        lease.timer = null;
        if (this.lease != lease || lease.ending) {
            return;
        }
        long now = clock.getAsLong();
        if (now - (lease.lastRenewal + campaign.ttl) >= 0) {
            endTerm(StepDownReason.EXPIRED);
            return;
        }
        long interval = campaign.renewInterval;
        lease.ticks = Math.max(lease.ticks + 1, (now - lease.holdStart) / interval);
        renew(lease);
    }

    /** Arms the watchdog for the term's current deadline, on the other loop. */
    private void watch(Lease lease) {
        long delay = Math.max(lease.term.deadlineNanos() - clock.getAsLong(), 0);
        lease.watchdog =
                watchdogLoop.schedule(
                        () -> {
                            try {
                                checkDeadline(lease);
                            } catch (Throwable ex) {
                                campaign.execute(() -> campaign.internalError(ex));
                            }
                        },
                        delay + 1,
                        TimeUnit.NANOSECONDS);
    }

    /** Runs on the watchdog's loop: ends a term whose deadline passed, or re-arms. */
    private void checkDeadline(Lease lease) {
        Term term = lease.term;
        if (term.endReason().isPresent()) {
            return;
        }
        if (!term.pastDeadline()) {
            watch(lease);
            return;
        }
        expire(lease);
    }

    /**
     * Runs on the watchdog's loop when a start of leader-only work found the term past its
     * deadline: ends it as the watchdog's timer would, without re-arming it.
     */
    private void guardedExpire(Lease lease) {
        try {
            if (lease.term.endReason().isEmpty() && lease.term.pastDeadline()) {
                expire(lease);
            }
        } catch (Throwable ex) {
            campaign.execute(() -> campaign.internalError(ex));
        }
    }

    /** Ends a term past its deadline at once, and has the loop step down. */
    private void expire(Lease lease) {
        Term term = lease.term;
        if (term.end(StepDownReason.EXPIRED)) {
            campaign.elector.unpublish(term);
            Campaign.logger.warn(
                    "redlease: term "
                            + term.token()
                            + " of '"
                            + campaign.elector.name()
                            + "' passed its deadline before its loop stepped down; the watchdog"
                            + " ended it");
        }
        campaign.execute(
                () -> {
                    if (this.lease == lease) {
                        endTerm(StepDownReason.EXPIRED);
                    }
                });
    }

    // Stepping down.

    /**
     * Ends the current term: interrupts its task and calls, then releases the lease once the task
     * has returned or the drain timeout has passed.
     */
    void endTerm(StepDownReason reason) {
        Lease lease = this.lease;
        if (lease == null || lease.ending) {
            return;
        }
        lease.ending = true;
        cancel(lease);
        giveUpRenewal(lease);
        campaign.onSteppingDown();
        campaign.elector.unpublish(lease.term);
        lease.term.end(reason);
        lease.reason = lease.term.endReason().orElse(reason);
        boolean hooks = !beforeRelease.isEmpty() && ReleaseHooks.graceful(lease.reason);
        releaseWhenDrained(lease, hooks);
    }

    /**
     * Releases the ended term's lease once its task has returned and its before-release hooks (if
     * called) have finished, or once the drain timeout (a stop's deadline) has passed.
     */
    private void releaseWhenDrained(Lease lease, boolean hooks) {
        if (!lease.taskRunning && !hooks) {
            release(lease);
            return;
        }
        lease.awaitingTask = true;
        if (hooks) {
            lease.hooksPending = beforeRelease.size();
            ReleaseHooks.call(campaign, beforeRelease, lease.term, () -> onHookDone(lease));
        }
        long wait =
                campaign.stopRequested()
                        ? Math.max(campaign.stopDeadline() - System.nanoTime(), 0)
                        : drainTimeout;
        lease.timer = campaign.schedule(() -> waitOver(lease), wait);
    }

    /**
     * A stop came while a step-down waits for its task or its before-release hooks (a resign's,
     * whose wait was armed with the drain timeout): that wait ends by the stop's deadline.
     */
    void stopRequestedWhileSteppingDown() {
        Lease lease = this.lease;
        ScheduledFuture<?> timer = lease == null ? null : lease.timer;
        if (lease == null || !lease.ending || !lease.awaitingTask || timer == null) {
            return;
        }
        long left = Math.max(campaign.stopDeadline() - System.nanoTime(), 0);
        if (left < timer.getDelay(TimeUnit.NANOSECONDS)) {
            timer.cancel(false);
            lease.timer = campaign.schedule(() -> waitOver(lease), left);
        }
    }

    /** The wait of a step-down for its task or hooks is over: release without them. */
    private void waitOver(Lease lease) {
        if (this.lease == lease && lease.awaitingTask && !lease.taskRunning) {
            Campaign.logger.warn(
                    "redlease: "
                            + lease.hooksPending
                            + " before-release hook(s) of '"
                            + campaign.elector.name()
                            + "' term "
                            + lease.term.token()
                            + " did not finish within the drain timeout;"
                            + " releasing the lease without them");
            release(lease);
        } else if (this.lease == lease && lease.awaitingTask && lease.taskRunning) {
            Thread thread = lease.taskThread;
            Campaign.logger.warn(
                    "redlease: the leader task of '"
                            + campaign.elector.name()
                            + "' term "
                            + lease.term.token()
                            + (thread == null
                                    ? " has not started"
                                    : " (thread '" + thread.getName() + "')")
                            + " did not return after its interrupt; releasing"
                            + " the lease without it");
            release(lease);
        }
    }

    private void onHookDone(Lease lease) {
        lease.hooksPending--;
        if (this.lease == lease
                && lease.awaitingTask
                && !lease.taskRunning
                && lease.hooksPending <= 0) {
            release(lease);
        }
    }

    private void release(Lease lease) {
        lease.awaitingTask = false;
        cancel(lease);
        campaign.release(
                lease.term.token(),
                error -> {
                    if (error != null) {
                        campaign.notifyError(Operation.RELEASE, error);
                    }
                    steppedDown(lease);
                });
        lease.releaseSent = true;
    }

    /**
     * A step failed while the term was stepping down. A release that was sent and went wrong is
     * given up, and the loop steps down; a wait for the task or the hooks goes on and releases as
     * it would; a step-down that failed before either ends the term, if it had not ended, and
     * releases once the task has returned (without calling the hooks).
     */
    void stepDownAfterError() {
        Lease lease = this.lease;
        if (lease == null) {
            return;
        }
        if (lease.releaseSent) {
            steppedDown(lease);
            return;
        }
        if (lease.awaitingTask && lease.timer != null && !lease.timer.isDone()) {
            return;
        }
        campaign.elector.unpublish(lease.term);
        lease.term.end(StepDownReason.INTERNAL_ERROR);
        lease.reason = lease.term.endReason().orElse(StepDownReason.INTERNAL_ERROR);
        // Hooks counted but never called (their call failed) are not waited for.
        lease.hooksPending = 0;
        releaseWhenDrained(lease, false);
    }

    private void steppedDown(Lease lease) {
        if (this.lease != lease) {
            return;
        }
        cancel(lease);
        this.lease = null;
        StepDownReason reason = lease.reason;
        campaign.notify("onSteppedDown", () -> campaign.elector.observer().onSteppedDown(reason));
        campaign.onSteppedDown();
    }

    /**
     * The last resort after a failed recovery: steps down as after an error in a step-down (see
     * {@link #stepDownAfterError}), so that the lease is released and the step-down reported once
     * the task has returned or the drain timeout has passed, and the run contends again after that.
     * If even that throws, drops the term: ends it and reports the step-down, each part on its own,
     * without a release (the lease lapses after its time to live).
     *
     * @return -1 when a step-down goes on; else how long the run waits before it contends again
     *     (the drain timeout while the dropped term's task still runs, else the acquire interval)
     */
    long forget() {
        Lease lease = this.lease;
        if (lease == null) {
            return campaign.acquireInterval;
        }
        lease.ending = true;
        quietly(() -> giveUpRenewal(lease));
        quietly(campaign::onSteppingDown);
        try {
            stepDownAfterError();
            return -1;
        } catch (RuntimeException ex) {
            Campaign.logger.error(
                    "redlease: the term of '"
                            + campaign.elector.name()
                            + "' could not step down; dropped without a release",
                    ex);
        }
        long wait = lease.taskRunning ? drainTimeout : campaign.acquireInterval;
        if (this.lease != lease) {
            // It stepped down before the failure: reported already.
            return wait;
        }
        this.lease = null;
        quietly(() -> cancel(lease));
        quietly(() -> lease.term.end(StepDownReason.INTERNAL_ERROR));
        quietly(() -> campaign.elector.unpublish(lease.term));
        StepDownReason reason = lease.term.endReason().orElse(StepDownReason.INTERNAL_ERROR);
        quietly(
                () ->
                        campaign.notify(
                                "onSteppedDown",
                                () -> campaign.elector.observer().onSteppedDown(reason)));
        return wait;
    }

    private static void quietly(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException ex) {
            Campaign.logger.error("redlease: dropping a term after a failed recovery", ex);
        }
    }

    /**
     * The term waits for no renewal any more: one still in flight is reported as failed unless its
     * reply comes within a renew interval of its send.
     */
    private void giveUpRenewal(Lease lease) {
        RoundTrips.@Nullable InFlight<Boolean> pending = lease.pendingRenewal;
        if (pending != null) {
            campaign.roundTrips().giveUp(pending, campaign.renewInterval);
        }
    }

    private static void cancel(Lease lease) {
        if (lease.timer != null) {
            lease.timer.cancel(false);
            lease.timer = null;
        }
        if (lease.watchdog != null && lease.ending) {
            lease.watchdog.cancel(false);
            lease.watchdog = null;
        }
    }

    /** The loop's state of one term. */
    private static final class Lease {

        /** Set once, right after the lease is made (the term's expiry refers to its lease). */
        Term term;

        /** Send time of the last request that extended the lease (initially the acquire). */
        long lastRenewal;

        long holdStart;

        /** Index of the last renewal tick consumed, counted from {@link #holdStart}. */
        long ticks;

        boolean taskRunning;

        @Nullable Thread taskThread;

        boolean ending;

        /** Whether the release went out; a failure before it must still send it. */
        boolean releaseSent;

        /** Whether the release waits for the interrupted task or the before-release hooks. */
        boolean awaitingTask;

        /** How many before-release hooks have not finished yet. */
        int hooksPending;

        @Nullable ScheduledFuture<?> timer;

        @Nullable ScheduledFuture<?> watchdog;

        /** The last renewal sent, which may still wait for its reply, and its send time. */
        RoundTrips.@Nullable InFlight<Boolean> pendingRenewal;

        long pendingSentAt;

        StepDownReason reason = StepDownReason.SHUTDOWN;

        Lease(long acquiredAt) {
            this.lastRenewal = acquiredAt;
        }
    }
}
