package io.redlease.core.scheduling;

import io.redlease.core.Term;
import io.redlease.core.scheduling.SlotJobs.Result;
import io.redlease.core.scheduling.SlotTrigger.Window;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a once-per-slot job runs in a term, against the term's view of the ledger ({@link
 * Progress}):
 *
 * <ul>
 *   <li>slots that came due before the term began were <em>missed</em>: right after it begins they
 *       run or are dropped as {@link MissedSlots} says;
 *   <li>slots that come due while it leads are its <em>own</em>: each runs, in order, however late
 *       its link fires;
 *   <li>a slot whose run <em>failed</em> runs again before the next one under {@link
 *       MissedSlots#RUN_ALL}, and is dropped otherwise (a fixed delay's is dropped at once: its
 *       next run comes one delay after the failure);
 *   <li>a term that falls more than {@code maxCatchUp} slots behind drops the oldest.
 * </ul>
 *
 * Dropped slots are settled for the term and counted as missed; a run stops the slots after it when
 * it does not complete. A paused job's slots, and those that came due before its last resume, are
 * settled without running and counted as paused: they are never caught up.
 */
final class SlotPolicy {

    private final SlotJob job;

    SlotPolicy(SlotJob job) {
        this.job = job;
    }

    /** Handles the slots that came due before the term began, up to {@link Progress#until}. */
    void catchUpMissed(Term term, Progress at, SlotSchedule schedule) {
        SlotTrigger trigger = schedule.trigger();
        Instant until = at.until != null ? at.until : SlotJob.now(schedule);
        int keep =
                switch (job.missedSlots()) {
                    case SKIP -> 0;
                    case RUN_ALL -> job.maxCatchUpSlots();
                    default -> 1;
                };
        Instant from = trigger instanceof SlotTrigger.FixedDelay ? at.completedAt : at.handled();
        if (from == null) {
            return; // A fixed delay that never completed: nothing is due before its first run.
        }
        Window due = trigger.between(from, until, Math.max(keep, 1));
        if (due.isEmpty()) {
            return;
        }
        List<Instant> slots = due.slots();
        List<Instant> runs = slots.subList(Math.max(0, slots.size() - keep), slots.size());
        if (runs.isEmpty()) {
            drop(at, due.count(), slots.get(slots.size() - 1), null, due.atLeast());
            if (trigger instanceof SlotTrigger.FixedDelay) {
                at.delayFrom = until; // SKIP: the next run comes one delay after the election.
            }
        } else {
            drop(at, due.dropped(), runs.get(0), runs.get(0), due.atLeast());
        }
        runAll(term, at, schedule, runs, true);
    }

    /** Runs a link's slot, after the slots before it that are due and not handled. */
    void runDue(Term term, Progress at, SlotSchedule schedule, Instant slot) {
        SlotTrigger trigger = schedule.trigger();
        Instant handled = at.handled();
        if (handled != null && !slot.isAfter(handled)) {
            job.record(slot, Result.SKIPPED);
            return;
        }
        if (trigger instanceof SlotTrigger.FixedDelay
                && at.delayFrom != null
                && slot.isBefore(trigger.after(at.delayFrom))) {
            // A link set before the term's view of the ledger (a follower's, or one its catch-up
            // outdated): the delay counts from the last completion on any instance, so nothing is
            // due yet; the next link goes one delay after it.
            return;
        }
        if (handled == null || trigger instanceof SlotTrigger.FixedDelay) {
            if (job.run(term, at, schedule, slot, false) == SlotRun.Outcome.FAILED
                    && trigger instanceof SlotTrigger.FixedDelay) {
                job.recordMissed(slot, 1, false);
            }
            return;
        }
        Window due = trigger.between(handled, slot, job.maxCatchUpSlots() + 1);
        if (due.isEmpty()) {
            job.record(slot, Result.SKIPPED);
            return;
        }
        List<Instant> slots = due.slots();
        int first = 0;
        Instant failedThrough = at.attempted;
        if (job.missedSlots() != MissedSlots.RUN_ALL && failedThrough != null) {
            // Slots this term tried and did not complete are older than those it has not tried.
            while (first < slots.size() - 1 && !slots.get(first).isAfter(failedThrough)) {
                first++;
            }
        }
        List<Instant> runs = slots.subList(first, slots.size());
        drop(at, due.dropped() + first, runs.get(0), runs.get(0), due.atLeast());
        runAll(term, at, schedule, runs, false);
    }

    /**
     * Where the next link goes on the leader: the slot after {@code from}, however late, unless
     * more than {@code maxCatchUp} + 1 slots are behind.
     */
    @Nullable Instant next(Progress at, SlotSchedule schedule, Instant from) {
        SlotTrigger trigger = schedule.trigger();
        Instant now = SlotJob.now(schedule);
        if (trigger instanceof SlotTrigger.FixedDelay) {
            return trigger.after(at.delayFrom != null ? at.delayFrom : now);
        }
        Instant after = SlotJob.max(from, at.handled());
        Instant next = trigger.after(after);
        if (next == null || next.isAfter(now)) {
            return next;
        }
        Window due = trigger.between(after, now, job.maxCatchUpSlots() + 1);
        if (due.dropped() > 0) {
            drop(at, due.dropped(), due.slots().get(0), due.slots().get(0), due.atLeast());
            return due.slots().get(0);
        }
        return next;
    }

    /** Runs slots in order; the last is the link's own unless {@code catchUp}. */
    private void runAll(
            Term term, Progress at, SlotSchedule schedule, List<Instant> runs, boolean catchUp) {
        for (int i = 0; i < runs.size(); i++) {
            boolean own = !catchUp && i == runs.size() - 1;
            SlotRun.Outcome outcome = job.run(term, at, schedule, runs.get(i), !own);
            if (outcome == SlotRun.Outcome.PAUSED && i < runs.size() - 1) {
                // Paused: the rest are settled too, without reading the pause for each.
                List<Instant> rest = runs.subList(i + 1, runs.size());
                at.settle(rest.get(rest.size() - 1));
                job.record(rest.get(rest.size() - 1), Result.PAUSED, rest.size());
                return;
            }
            if (outcome != SlotRun.Outcome.COMPLETED && outcome != SlotRun.Outcome.SETTLED) {
                return;
            }
        }
    }

    /**
     * Counts dropped slots as missed and settles them for the term.
     *
     * @param reported the slot the count is reported at
     * @param firstKept the oldest slot that runs, or null when none does and {@code reported} is
     *     the newest dropped
     */
    private void drop(
            Progress at,
            long dropped,
            Instant reported,
            @Nullable Instant firstKept,
            boolean atLeast) {
        if (dropped <= 0) {
            return;
        }
        // Slots are whole milliseconds apart: everything before the first kept one is settled.
        at.settled = firstKept == null ? reported : firstKept.minusMillis(1);
        job.recordMissed(reported, dropped, atLeast);
    }
}
