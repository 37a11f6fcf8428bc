package io.redlease.boot.observation;

import io.micrometer.observation.Observation;
import io.redlease.core.annotation.LeaderOnlyRun;

/** The context of a {@link LeaderOnlyObservationDocumentation#LEADER_ONLY_RUN} observation. */
public class LeaderOnlyObservationContext extends Observation.Context {

    private final LeaderOnlyRun run;

    /**
     * Creates the context of a run.
     *
     * @param run the run (its outcome is known when the observation stops)
     */
    public LeaderOnlyObservationContext(LeaderOnlyRun run) {
        this.run = run;
    }

    /** Returns the run. */
    public LeaderOnlyRun getRun() {
        return run;
    }
}
