package io.redlease.core;

import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * The threads redlease's engine runs on: the election loops, the Redis pool for blocking clients,
 * the subscription threads and the partition balancers. They run the state machines and redlease's
 * own Redis traffic (acquires, renewals, heartbeats, membership, subscriptions) and never
 * application code: observers, events and leader tasks run on other threads.
 *
 * <p>With Micrometer's Observation API on the class path, each engine thread runs inside an
 * observation named {@value #OBSERVATION_NAME} that no handler hears of: it starts no span and no
 * timer, and it is current on the thread for its whole life, so that what a traced client starts
 * there (Lettuce's command observations) has it as its parent. An {@code ObservationPredicate} that
 * declines observations whose parent is it (Spring Boot's auto-configuration registers one) keeps
 * redlease's background traffic out of the application's traces, while a fenced write made inside a
 * traced leader-only run stays a child of that run.
 */
public final class EngineThreads {

    /** The name of the observation current on every engine thread. */
    public static final String OBSERVATION_NAME = "redlease.engine";

    private static final boolean OBSERVATION_PRESENT =
            ClassUtils.isPresent(
                    "io.micrometer.observation.ObservationRegistry",
                    EngineThreads.class.getClassLoader());

    private static final ThreadLocal<@Nullable Boolean> ENGINE = new ThreadLocal<>();

    private EngineThreads() {}

    /** Returns whether the calling thread is one of redlease's engine threads. */
    public static boolean isEngineThread() {
        return ENGINE.get() != null;
    }

    /**
     * Creates a daemon thread of redlease's engine: one that runs no application code.
     *
     * @param runnable what the thread runs
     * @param name the thread's name
     * @return the thread, not started
     */
    public static Thread newThread(Runnable runnable, String name) {
        Thread thread = new Thread(engine(runnable), name);
        thread.setDaemon(true);
        return thread;
    }

    /** Returns {@code runnable} marked as the engine's: run inside the engine's observation. */
    static Runnable engine(Runnable runnable) {
        Runnable observed = OBSERVATION_PRESENT ? EngineObservation.inside(runnable) : runnable;
        return () -> {
            ENGINE.set(Boolean.TRUE);
            try {
                observed.run();
            } finally {
                ENGINE.remove();
            }
        };
    }
}
