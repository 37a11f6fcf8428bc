package io.redlease.core.scheduling;

/**
 * What a once-per-slot job does with slots that came due while no instance ran them: between the
 * completed slot and the one due now, for example while a crashed leader's lease ran out.
 */
public enum MissedSlots {

    /**
     * Take the setting {@code redlease.scheduling.missed-slots} (by default {@link #RUN_LATEST}).
     */
    DEFAULT,

    /** Run the most recent missed slot once, right after election; older ones are dropped. */
    RUN_LATEST,

    /** Run no missed slot: the next tick runs its own slot. */
    SKIP,

    /**
     * Run every missed slot, oldest first, right after election; at most the newest {@code
     * maxCatchUp} of them, older ones are dropped.
     */
    RUN_ALL
}
