package io.redlease.core;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;

/**
 * The observation current on every engine thread ({@link EngineThreads}): created in a registry of
 * its own whose only handler does nothing, so that it is a real observation (a traced client takes
 * it as the parent of what it starts) that no application handler ever hears of. Loaded only when
 * Micrometer's Observation API is on the class path.
 */
final class EngineObservation {

    private static final Observation ENGINE = create();

    private EngineObservation() {}

    /** Returns {@code runnable} run with the engine's observation current. */
    static Runnable inside(Runnable runnable) {
        return () -> {
            try (Observation.Scope scope = ENGINE.openScope()) {
                runnable.run();
            }
        };
    }

    private static Observation create() {
        ObservationRegistry quiet = ObservationRegistry.create();
        quiet.observationConfig().observationHandler(new Silent());
        return Observation.createNotStarted(EngineThreads.OBSERVATION_NAME, quiet).start();
    }

    /** Hears of the engine's observation and does nothing. */
    private static final class Silent implements ObservationHandler<Observation.Context> {

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}
