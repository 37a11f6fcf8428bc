package io.redlease.boot.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.annotation.LeaderOnlyRunListener;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * Observes each leader-only call as {@link LeaderOnlyObservationDocumentation#LEADER_ONLY_RUN}: a
 * run is an observation started on the calling thread and current while the method runs; a call
 * that did not run is an observation started and stopped at once.
 */
public class ObservedLeaderOnlyRuns implements LeaderOnlyRunListener {

    private static final DefaultLeaderOnlyObservationConvention DEFAULT =
            new DefaultLeaderOnlyObservationConvention();

    private final ObservationRegistry registry;

    private final @Nullable LeaderOnlyObservationConvention convention;

    /**
     * Creates the listener.
     *
     * @param registry where the observations go
     * @param convention the convention that replaces the default one, or null
     */
    public ObservedLeaderOnlyRuns(
            ObservationRegistry registry, @Nullable LeaderOnlyObservationConvention convention) {
        this.registry = registry;
        this.convention = convention;
    }

    @Override
    public @Nullable Object around(LeaderOnlyRun run, Callable<@Nullable Object> proceed)
            throws Exception {
        Observation observation = observation(run).start();
        try (Observation.Scope scope = observation.openScope()) {
            return proceed.call();
        } catch (Exception | Error ex) {
            observation.error(ex);
            throw ex;
        } finally {
            observation.stop();
        }
    }

    @Override
    public void notRun(LeaderOnlyRun run) {
        observation(run).start().stop();
    }

    private Observation observation(LeaderOnlyRun run) {
        return LeaderOnlyObservationDocumentation.LEADER_ONLY_RUN.observation(
                convention, DEFAULT, () -> new LeaderOnlyObservationContext(run), registry);
    }

    @Override
    public String toString() {
        return "ObservedLeaderOnlyRuns";
    }
}
