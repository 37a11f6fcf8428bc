package io.redlease.reliability;

import java.time.Duration;

/**
 * What each leader does while it leads: append {@code (token, sequence)} to the {@link FencedLog}
 * again and again, through its term's fencer (or, for the mutant, without it), and record every
 * attempt in the {@link History}.
 *
 * @param fenced whether writes go through the fence; false is the mutant that must be caught
 * @param pacing the pause between two writes
 * @param writesPerTerm after this many applied writes the task returns, ending the term; 0 for
 *     unbounded
 * @param gate called before each write; may park the writer between deciding and writing
 * @param detached whether each write runs on a separate thread that the end of the term does not
 *     interrupt, so a write in flight completes and its verdict is seen (like a JDBC call)
 * @param lastWord whether the task makes one more write with its token once its term has ended,
 *     like a leader flushing its state on the way out (a stale write when a successor exists)
 */
record Workload(
        boolean fenced,
        Duration pacing,
        int writesPerTerm,
        Gate gate,
        boolean lastWord,
        boolean detached) {

    /** Called between deciding to write and writing. */
    @FunctionalInterface
    interface Gate {

        /**
         * Runs before a write; returns true if it parked the writer (the write then goes ahead even
         * if the term ended meanwhile, as a thread that never looked would).
         */
        boolean beforeWrite(String candidate, long token, long seq);

        Gate NONE = (candidate, token, seq) -> false;
    }

    static Workload steady(Duration pacing) {
        return new Workload(true, pacing, 0, Gate.NONE, false, false);
    }

    Workload unfenced() {
        return new Workload(false, pacing, writesPerTerm, gate, lastWord, detached);
    }

    Workload writesPerTerm(int n) {
        return new Workload(fenced, pacing, n, gate, lastWord, detached);
    }

    Workload gate(Gate gate) {
        return new Workload(fenced, pacing, writesPerTerm, gate, lastWord, detached);
    }

    Workload detachedWrites() {
        return new Workload(fenced, pacing, writesPerTerm, gate, lastWord, true);
    }

    Workload withLastWord() {
        return new Workload(fenced, pacing, writesPerTerm, gate, true, detached);
    }
}
