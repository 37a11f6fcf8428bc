package io.redlease.core.scheduling;

import io.redlease.core.SlotLedger;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A term's view of a once-per-slot job's ledger. Once the term has claimed the job no other term
 * can change the ledger, so the term keeps this view up to date itself: it reads the ledger once
 * per term.
 */
final class Progress {

    final long token;

    @Nullable Instant completedSlot;

    @Nullable Instant completedAt;

    @Nullable Instant epoch;

    /** The newest slot this term dropped as missed, or null. */
    @Nullable Instant settled;

    /** Where the job's slots begin. */
    final @Nullable Instant since;

    /** Where a fixed delay counts from: the last run's end on this instance, or the ledger's. */
    @Nullable Instant delayFrom;

    /** The newest slot this term has run or tried to run. */
    @Nullable Instant attempted;

    /**
     * The slots up to this instant were handled as missed at the term's start; later ones are its
     * own.
     */
    @Nullable Instant until;

    /** When the job was last resumed: the slots up to it are settled, never run. */
    @Nullable Instant resumed;

    /** The zone the ledger's cron slots were computed in. */
    final @Nullable String zone;

    Progress(long token, SlotLedger.State state) {
        this.token = token;
        this.completedSlot = state.completedSlot();
        this.completedAt = state.completedAt();
        this.epoch = state.epoch();
        this.since = state.since();
        this.zone = state.zone();
        this.delayFrom = state.completedAt();
        this.resumed = state.resumedAt();
    }

    /**
     * The newest slot that is done for this term: completed, dropped, before the job, or before its
     * last resume.
     */
    @Nullable Instant handled() {
        Instant handled = since;
        for (Instant done : new Instant[] {completedSlot, settled, resumed}) {
            if (done != null) {
                handled = SlotJob.max(done, handled);
            }
        }
        return handled;
    }

    /** Records the job's last resume, as the ledger has it. */
    void resumed(@Nullable Instant at) {
        if (at != null) {
            resumed = resumed == null ? at : SlotJob.max(at, resumed);
        }
    }

    /** Settles a slot without running it: the job was paused when it came. */
    void settle(Instant slot) {
        settled = settled == null ? slot : SlotJob.max(slot, settled);
    }

    /** Records that the term has run or tried to run a slot. */
    void attempt(Instant slot) {
        attempted = attempted == null ? slot : SlotJob.max(slot, attempted);
    }

    /** Records a slot the term marked complete, and returns the ledger as it now is. */
    SlotLedger.State completed(Instant slot, Instant at, Instant start) {
        completedSlot = slot;
        completedAt = at;
        if (epoch == null) {
            epoch = start;
        }
        return new SlotLedger.State(slot, at, epoch, since, zone, token);
    }
}
