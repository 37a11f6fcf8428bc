package io.redlease.core.scheduling;

import io.redlease.core.Slot;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import io.redlease.core.scheduling.SlotJobs.Result;
import io.redlease.core.scheduling.SlotTrigger.Window;
import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One once-per-slot {@code @Scheduled} method. Each link of its {@link SlotSchedule} comes here
 * with the slot it was scheduled for; on the leader, this decides what that slot means against the
 * term's view of the ledger (run it, skip it as done, run older missed slots first), runs the
 * method inside the term, and marks the slot only if the run completed while the term was active.
 * Runs of one job never overlap within an instance.
 */
final class SlotJob {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    final String id;

    final String electionId;

    /**
     * The bean, unwrapped from its proxies, and the method's name (scheduled methods take none).
     */
    private final Object target;

    private final String methodName;

    /** The policy the annotation sets; {@link MissedSlots#DEFAULT} takes the application's. */
    final MissedSlots policy;

    /** The maximum the annotation sets; 0 takes the application's. */
    final int maxCatchUp;

    private final boolean interruptOnStepDown;

    private final SlotJobs jobs;

    private volatile @Nullable SlotLedger ledger;

    private final ReentrantLock lock = new ReentrantLock();

    private volatile @Nullable SlotSchedule schedule;

    /** What the current term knows of the ledger; guarded by {@link #lock}. */
    private @Nullable Progress progress;

    /** The ledger as this instance last saw it, for the lag gauge. */
    private volatile SlotLedger.State known = SlotLedger.State.EMPTY;

    SlotJob(SlotJobs jobs, SlotJobs.Definition definition, Object target, Method method) {
        this.jobs = jobs;
        this.id = definition.id();
        this.electionId = definition.electionId();
        this.policy = definition.missedSlots();
        this.maxCatchUp = definition.maxCatchUp();
        this.interruptOnStepDown = definition.interruptOnStepDown();
        this.target = target;
        this.methodName = method.getName();
    }

    /** Returns whether this job is the given method of the given bean. */
    boolean runs(@Nullable Object bean, Method method) {
        return bean == target && method.getName().equals(methodName);
    }

    SlotLedger ledger() {
        SlotLedger current = ledger;
        if (current == null) {
            current = new SlotLedger(jobs.elector(electionId), id);
            ledger = current;
        }
        return current;
    }

    @Nullable SlotSchedule schedule() {
        return schedule;
    }

    /** Starts the job's links in place of the task Spring was scheduling for its method. */
    SlotSchedule start(SlotSchedule started) {
        synchronized (this) {
            if (schedule != null) {
                throw new IllegalStateException(
                        "redlease: once-per-slot job " + id + " is scheduled twice");
            }
            schedule = started;
        }
        started.start();
        return started;
    }

    /**
     * Handles a link of the schedule, for one slot.
     *
     * @return the slot of the next link
     */
    @Nullable Instant tick(SlotSchedule schedule, Instant slot) {
        SlotTrigger trigger = schedule.trigger();
        lock.lock();
        try {
            Term term = jobs.leading(electionId);
            Progress at = term == null ? null : takeOver(term, schedule, slot.minusMillis(1));
            if (term == null || at == null) {
                // A follower keeps ticking on its own clock, for nothing that is past.
                Instant now = now(schedule);
                return trigger.after(
                        trigger instanceof SlotTrigger.FixedDelay ? now : max(slot, now));
            }
            runDue(term, at, schedule, slot);
            return next(at, schedule, slot);
        } catch (RuntimeException ex) {
            logger.warn("redlease: once-per-slot job " + id + " could not handle slot " + slot, ex);
            return trigger.after(max(slot, now(schedule)));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Catches up right after election, on the job's scheduler.
     *
     * @return the slot of the next link, or null when this instance does not lead
     */
    @Nullable Instant catchUp(SlotSchedule schedule) {
        lock.lock();
        try {
            Term term = jobs.leading(electionId);
            Instant now = now(schedule);
            Progress at = term == null ? null : takeOver(term, schedule, now);
            return at == null ? null : next(at, schedule, now);
        } catch (RuntimeException ex) {
            logger.warn("redlease: once-per-slot job " + id + " could not catch up", ex);
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Claims the job for the term the first time the term touches it, and handles the slots that
     * came due while no instance ran them, as the policy says.
     *
     * @param since where the job's slots begin if it has never been claimed: before the slot the
     *     first claim comes for
     * @return the term's view of the ledger, or null when the term can no longer claim the job
     */
    private @Nullable Progress takeOver(Term term, SlotSchedule schedule, Instant since) {
        Progress current = progress;
        if (current != null && current.token == term.token()) {
            return current;
        }
        progress = null;
        SlotLedger.State state = ledger().claim(term, since).orElse(null);
        if (state == null) {
            logger.debug("redlease: once-per-slot job " + id + ": " + term + " cannot claim it");
            return null;
        }
        known = state;
        if (state.epoch() != null) {
            schedule.rephase(state.epoch());
        }
        Progress taken = new Progress(term.token(), state);
        progress = taken;
        catchUpMissed(term, taken, schedule);
        return taken;
    }

    private void catchUpMissed(Term term, Progress at, SlotSchedule schedule) {
        SlotTrigger trigger = schedule.trigger();
        Instant now = now(schedule);
        MissedSlots policy = jobs.policy(this);
        int keep =
                switch (policy) {
                    case SKIP -> 0;
                    case RUN_ALL -> jobs.maxCatchUp(this);
                    default -> 1;
                };
        Instant from = trigger instanceof SlotTrigger.FixedDelay ? at.completedAt : at.handled();
        if (from == null) {
            return; // A fixed delay that never completed: nothing is due before its first run.
        }
        Window due = trigger.between(from, now, Math.max(keep, 1));
        if (due.isEmpty()) {
            return;
        }
        List<Instant> runs =
                due.slots().subList(Math.max(0, due.slots().size() - keep), due.slots().size());
        drop(at, due, runs.isEmpty() ? null : runs.get(0), due.slots().get(due.slots().size() - 1));
        if (runs.isEmpty() && trigger instanceof SlotTrigger.FixedDelay) {
            at.delayFrom = now; // SKIP: the next run comes one delay after the election.
        }
        for (Instant slot : runs) {
            if (run(term, at, schedule, slot, true) != SlotRun.Outcome.COMPLETED) {
                return;
            }
        }
    }

    /** Runs a tick's slot, after the older due slots the policy keeps. */
    private void runDue(Term term, Progress at, SlotSchedule schedule, Instant slot) {
        SlotTrigger trigger = schedule.trigger();
        Instant handled = at.handled();
        if (handled != null && !slot.isAfter(handled)) {
            record(slot, Result.SKIPPED);
            return;
        }
        if (handled == null || trigger instanceof SlotTrigger.FixedDelay) {
            run(term, at, schedule, slot, false);
            return;
        }
        int older = jobs.policy(this) == MissedSlots.RUN_ALL ? jobs.maxCatchUp(this) : 0;
        Window due = trigger.between(handled, slot, older + 1);
        if (due.isEmpty()) {
            record(slot, Result.SKIPPED);
            return;
        }
        List<Instant> runs = due.slots();
        drop(at, due, runs.get(0), runs.get(runs.size() - 1));
        for (int i = 0; i < runs.size(); i++) {
            boolean own = i == runs.size() - 1;
            if (run(term, at, schedule, runs.get(i), !own) != SlotRun.Outcome.COMPLETED) {
                return;
            }
        }
    }

    /** Where the next link goes on the leader: the next slot, or fewer if far behind. */
    private @Nullable Instant next(Progress at, SlotSchedule schedule, Instant slot) {
        SlotTrigger trigger = schedule.trigger();
        Instant now = now(schedule);
        if (trigger instanceof SlotTrigger.FixedDelay) {
            return trigger.after(at.delayFrom != null ? at.delayFrom : now);
        }
        Instant from = max(slot, at.handled());
        Instant next = trigger.after(from);
        if (next == null || next.isAfter(now)) {
            return next;
        }
        // Late: run every slot that came due, unless more than maxCatchUp + 1 are behind.
        int limit = jobs.maxCatchUp(this) + 1;
        Window due = trigger.between(from, now, limit);
        if (due.dropped() > 0) {
            drop(at, due, due.slots().get(0), due.slots().get(due.slots().size() - 1));
            return due.slots().get(0);
        }
        return next;
    }

    /**
     * Records the due slots older than {@code firstKept} as missed and settles them for the term.
     *
     * @param firstKept the oldest slot that will run, or null when none will
     * @param newest the newest due slot
     */
    private void drop(Progress at, Window due, @Nullable Instant firstKept, Instant newest) {
        long dropped = firstKept == null ? due.count() : due.dropped();
        if (dropped <= 0) {
            return;
        }
        // Slots are whole milliseconds apart: everything before the first kept one is settled.
        at.settled = firstKept == null ? newest : firstKept.minusMillis(1);
        jobs.recordMissed(this, firstKept == null ? newest : firstKept, dropped, due.atLeast());
    }

    /** Runs one slot inside the term and marks it if the run completed while the term lasted. */
    private SlotRun.Outcome run(
            Term term, Progress at, SlotSchedule schedule, Instant slot, boolean catchUp) {
        return new SlotRun(this, new Slot(id, slot, catchUp)).execute(term, at, schedule);
    }

    /** Records a run's slot as completed, as the ledger now holds it. */
    void completed(SlotLedger.State state) {
        known = state;
    }

    boolean interruptOnStepDown() {
        return interruptOnStepDown;
    }

    void record(Instant slot, Result result) {
        jobs.record(this, slot, result);
    }

    /** Returns the scheduler's time, to the millisecond the ledger keeps. */
    static Instant now(SlotSchedule schedule) {
        return schedule.clock().instant().truncatedTo(ChronoUnit.MILLIS);
    }

    static Instant max(Instant a, @Nullable Instant b) {
        return b != null && b.isAfter(a) ? b : a;
    }

    /** How long the slot after the completed one has been due, as this instance last knew. */
    Duration lag() {
        SlotSchedule current = schedule;
        SlotLedger.State state = known;
        if (current == null || state.completedSlot() == null) {
            return Duration.ZERO;
        }
        SlotTrigger trigger = current.trigger();
        Instant next =
                trigger.after(
                        trigger instanceof SlotTrigger.FixedDelay
                                ? state.completedAt()
                                : state.completedSlot());
        Instant now = now(current);
        return next == null || !next.isBefore(now) ? Duration.ZERO : Duration.between(next, now);
    }

    /** Returns the next slot after the one a ledger holds as completed, or null. */
    @Nullable Instant nextAfter(SlotLedger.State state) {
        SlotSchedule current = schedule;
        Instant from =
                current != null && current.trigger() instanceof SlotTrigger.FixedDelay
                        ? state.completedAt()
                        : state.completedSlot();
        return current == null || from == null ? null : current.trigger().after(from);
    }

    /** Describes the trigger, once scheduled. */
    String describeTrigger() {
        SlotSchedule current = schedule;
        return current == null ? "not scheduled" : String.valueOf(current.trigger());
    }

    Clock clock() {
        SlotSchedule current = schedule;
        return current != null ? current.clock() : Clock.systemDefaultZone();
    }

    @Override
    public String toString() {
        return "once-per-slot job " + id;
    }
}
