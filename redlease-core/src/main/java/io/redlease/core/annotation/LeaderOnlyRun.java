package io.redlease.core.annotation;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnlySkipListener.MethodRef;
import org.jspecify.annotations.Nullable;

/**
 * One call of a {@link LeaderOnly} method as the {@link LeaderOnlyRunListener}s see it: which
 * method, in which election (and partition), in which term and slot, on which instance, and how it
 * ended. A run that did not start (skipped or rejected) has no term: its token is 0.
 */
public final class LeaderOnlyRun {

    private static final ThreadLocal<@Nullable LeaderOnlyRun> CURRENT = new ThreadLocal<>();

    private final MethodRef method;

    private final @Nullable Integer partition;

    private final long token;

    private final @Nullable Slot slot;

    private final String instanceId;

    private volatile @Nullable Outcome outcome;

    /**
     * Creates a run.
     *
     * @param method the method, with the election it runs in (for a run per partition, the
     *     partitioned election's name)
     * @param partition the partition the run is for, or null
     * @param token the fencing token of the run's term, or 0 when it did not start
     * @param slot the slot of a once-per-slot run (also of a call made inside one), or null
     * @param instanceId this instance's id in the election
     */
    public LeaderOnlyRun(
            MethodRef method,
            @Nullable Integer partition,
            long token,
            @Nullable Slot slot,
            String instanceId) {
        this.method = method;
        this.partition = partition;
        this.token = token;
        this.slot = slot;
        this.instanceId = instanceId;
    }

    /** Returns the method, with the election it runs in. */
    public MethodRef method() {
        return method;
    }

    /**
     * Returns the name of the election the run is in: the partitioned election's for a run per
     * partition (see {@link #partition()}).
     */
    public String election() {
        return method.election();
    }

    /** Returns the partition the run is for, or null for a run of a single election. */
    public @Nullable Integer partition() {
        return partition;
    }

    /** Returns the fencing token of the run's term, or 0 for a call that did not run. */
    public long token() {
        return token;
    }

    /**
     * Returns the slot of a once-per-slot run, or of a call made inside one; null for other runs.
     */
    public @Nullable Slot slot() {
        return slot;
    }

    /** Returns this instance's id in the election. */
    public String instanceId() {
        return instanceId;
    }

    /**
     * Returns how the run ended: known when a listener's {@code proceed} has returned or thrown,
     * and for a call that did not run; null while it runs.
     */
    public @Nullable Outcome outcome() {
        return outcome;
    }

    void outcome(Outcome outcome) {
        this.outcome = outcome;
    }

    /**
     * Returns the run the calling thread is making (the innermost one, for a leader-only call made
     * inside another), or null.
     */
    public static @Nullable LeaderOnlyRun current() {
        return CURRENT.get();
    }

    /** Makes {@code run} the calling thread's current run; returns the one it replaces. */
    static @Nullable LeaderOnlyRun enter(LeaderOnlyRun run) {
        LeaderOnlyRun outer = CURRENT.get();
        CURRENT.set(run);
        return outer;
    }

    /** Makes {@code outer} the calling thread's current run again. */
    static void exit(@Nullable LeaderOnlyRun outer) {
        if (outer == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(outer);
        }
    }

    /**
     * Returns the outcome of a run that ended with {@code failure} (null when it returned): {@link
     * Outcome#REFUSED} for a {@link FenceRefusedException}, else {@link Outcome#CUT_SHORT} when its
     * term is no longer active, else {@link Outcome#RAN}.
     */
    static Outcome ended(@Nullable Throwable failure, boolean termActive) {
        if (failure instanceof FenceRefusedException) {
            return Outcome.REFUSED;
        }
        return termActive ? Outcome.RAN : Outcome.CUT_SHORT;
    }

    @Override
    public String toString() {
        return "LeaderOnlyRun["
                + method.name()
                + " in "
                + election()
                + (partition != null ? " partition " + partition : "")
                + (token != 0 ? ", token " + token : "")
                + (slot != null ? ", slot " + slot.time() : "")
                + (outcome != null ? ", " + outcome.value() : "")
                + "]";
    }

    /** How a leader-only call ended. */
    public enum Outcome {
        /**
         * The method ran inside an active term and its term was still active when it returned or
         * threw (an exception of its own is reported with the run, the outcome stays {@code ran});
         * for a once-per-slot run: and its slot was marked, or it threw.
         */
        RAN("ran"),
        /** The method did not run: this instance did not hold a term of the election. */
        SKIPPED_NOT_LEADER("skipped-not-leader"),
        /**
         * The method did not run: the term it would have run in had ended (the term of the work it
         * was called from, or this instance's, which ended just before the call).
         */
        SKIPPED_TERM_ENDED("skipped-term-ended"),
        /** The method runs once per owned partition, and this instance owned none. */
        SKIPPED_NO_PARTITION("skipped-no-partition"),
        /**
         * The method did not run and the caller got a {@link io.redlease.core.NotLeaderException}
         * ({@link LeaderOnly.WhenNotLeader#REJECT}).
         */
        REJECTED("rejected"),
        /**
         * The method ran and ended with a {@link FenceRefusedException}: a fenced write was refused
         * because a newer term exists; for a once-per-slot run, also a run whose mark the ledger
         * refused.
         */
        REFUSED("refused"),
        /**
         * The method ran, and its term ended (step-down, lost lease, or its local deadline) before
         * the method returned or threw; for a once-per-slot run, also one whose schedule was
         * cancelled during it or whose method did not complete on the scheduler's thread. Its
         * effects may be partial, and a once-per-slot run's slot is not marked.
         */
        CUT_SHORT("cut-short");

        private final String value;

        Outcome(String value) {
            this.value = value;
        }

        /** Returns the outcome as observations, meters and logs name it, such as {@code ran}. */
        public String value() {
            return value;
        }
    }
}
