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

    Progress(long token, SlotLedger.State state) {
        this.token = token;
        this.completedSlot = state.completedSlot();
        this.completedAt = state.completedAt();
        this.epoch = state.epoch();
        this.since = state.since();
        this.delayFrom = state.completedAt();
    }

    /** The newest slot that is done for this term: completed, dropped, or before the job. */
    @Nullable Instant handled() {
        Instant handled = since;
        for (Instant done : new Instant[] {completedSlot, settled}) {
            if (done != null) {
                handled = SlotJob.max(done, handled);
            }
        }
        return handled;
    }

    /** Records a slot the term marked complete, and returns the ledger as it now is. */
    SlotLedger.State completed(Instant slot, Instant at, Instant start) {
        completedSlot = slot;
        completedAt = at;
        if (epoch == null) {
            epoch = start;
        }
        return new SlotLedger.State(slot, at, epoch, since, token);
    }
}
