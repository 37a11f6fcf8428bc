package io.redlease.boot.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The convention of the {@link LeaderOnlyObservationDocumentation#LEADER_ONLY_RUN} observation: a
 * bean of this type replaces {@link DefaultLeaderOnlyObservationConvention}.
 */
public interface LeaderOnlyObservationConvention
        extends ObservationConvention<LeaderOnlyObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof LeaderOnlyObservationContext;
    }
}
