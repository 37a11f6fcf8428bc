package io.redlease.boot.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationPredicate;
import io.micrometer.observation.ObservationView;
import io.redlease.core.EngineThreads;

/**
 * Declines every observation started under redlease's engine ({@link EngineThreads}): the commands
 * a traced Redis client (Lettuce) sends for redlease's acquires, renewals, heartbeats, membership
 * and subscriptions, which would otherwise each start a trace of their own. Observations started
 * under a leader-only run (its fenced writes) are not affected.
 */
public class EngineTrafficPredicate implements ObservationPredicate {

    @Override
    public boolean test(String name, Observation.Context context) {
        for (ObservationView parent = context.getParentObservation();
                parent != null;
                parent = parent.getContextView().getParentObservation()) {
            if (EngineThreads.OBSERVATION_NAME.equals(parent.getContextView().getName())) {
                return false;
            }
        }
        return true;
    }
}
