package io.redlease.benchmarks.failover;

import io.redlease.benchmarks.contenders.Contestant;

/**
 * The outcome of one failover trial.
 *
 * @param scenario graceful or crash
 * @param contestant who was measured
 * @param index the trial's number within its contestant and scenario
 * @param latencyMs graceful: from the leader's "stepping down" to the successor's "elected"; crash:
 *     from the SIGKILL to the successor's "elected"; NaN if the trial failed
 * @param leaseLeftMs crash: how long the dead leader's lease still had to live at the kill (PTTL
 *     read right after it, plus the time that read took); graceful: how long the old leader's
 *     step-down took until the library returned
 * @param startedNanos when the measured interval began, in the child JVMs' {@link
 *     System#nanoTime()} (the monotonic clock, shared by the processes of one machine, so JVM logs
 *     decorated with {@code timenanos} line up with it); 0 if the trial failed
 * @param note why the trial failed, or empty
 */
record Trial(
        Scenario scenario,
        Contestant contestant,
        int index,
        double latencyMs,
        double leaseLeftMs,
        long startedNanos,
        String note) {

    boolean ok() {
        return !Double.isNaN(latencyMs);
    }

    String csv() {
        return String.join(
                ",",
                scenario.id(),
                contestant.id(),
                Integer.toString(index),
                String.format("%.3f", latencyMs),
                String.format("%.3f", leaseLeftMs),
                Long.toString(startedNanos),
                note.replace(',', ';'));
    }

    /** The two failover scenarios. */
    enum Scenario {
        GRACEFUL("graceful", "Graceful hand-off"),
        CRASH("crash", "Crash (SIGKILL of the leader JVM)");

        private final String id;

        private final String title;

        Scenario(String id, String title) {
            this.id = id;
            this.title = title;
        }

        String id() {
            return id;
        }

        String title() {
            return title;
        }
    }
}
