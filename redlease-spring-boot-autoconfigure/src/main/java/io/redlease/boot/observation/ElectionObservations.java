package io.redlease.boot.observation;

import io.micrometer.observation.ObservationRegistry;
import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Observes an election's transitions as {@link
 * ElectionObservationDocumentation#ELECTION_TRANSITION}: an {@link Observer} to add to each
 * elector.
 */
public class ElectionObservations {

    private static final DefaultElectionObservationConvention DEFAULT =
            new DefaultElectionObservationConvention();

    private final ObservationRegistry registry;

    private final @Nullable ElectionObservationConvention convention;

    /**
     * Creates the observations.
     *
     * @param registry where the observations go
     * @param convention the convention that replaces the default one, or null
     */
    public ElectionObservations(
            ObservationRegistry registry, @Nullable ElectionObservationConvention convention) {
        this.registry = registry;
        this.convention = convention;
    }

    /**
     * Returns the observer of one election.
     *
     * @param election the election's name
     * @param instanceId supplies this instance's id in it, or null when unknown
     */
    public Observer observer(String election, Supplier<@Nullable String> instanceId) {
        return new Observer() {
            @Override
            public void onElected(long token) {
                observe(new ElectionObservationContext(election, instanceId.get(), token, null));
            }

            @Override
            public void onSteppedDown(StepDownReason reason) {
                observe(new ElectionObservationContext(election, instanceId.get(), 0, reason));
            }
        };
    }

    private void observe(ElectionObservationContext context) {
        ElectionObservationDocumentation.ELECTION_TRANSITION
                .observation(convention, DEFAULT, () -> context, registry)
                .start()
                .stop();
    }
}
