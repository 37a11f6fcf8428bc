package io.redlease.boot.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The convention of the {@link ElectionObservationDocumentation#ELECTION_TRANSITION} observation: a
 * bean of this type replaces {@link DefaultElectionObservationConvention}.
 */
public interface ElectionObservationConvention
        extends ObservationConvention<ElectionObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof ElectionObservationContext;
    }
}
