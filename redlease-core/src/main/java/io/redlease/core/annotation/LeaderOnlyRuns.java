package io.redlease.core.annotation;

import io.redlease.core.annotation.LeaderOnlyRun.Outcome;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Passes leader-only runs through the {@link LeaderOnlyRunListener}s, isolating their failures:
 * {@link LeaderOnlyAnnotationBeanPostProcessor} makes one for its interceptor and the once-per-slot
 * jobs it registers.
 */
public final class LeaderOnlyRuns {

    private static final Log logger = LogFactory.getLog(LeaderOnlyRunListener.class);

    /** Reports to no listener. */
    public static final LeaderOnlyRuns NONE = new LeaderOnlyRuns(List::of);

    private final Supplier<List<LeaderOnlyRunListener>> listeners;

    /**
     * Creates the runs of a set of listeners.
     *
     * @param listeners supplies the listeners at each call
     */
    public LeaderOnlyRuns(Supplier<List<LeaderOnlyRunListener>> listeners) {
        this.listeners = listeners;
    }

    /**
     * Makes a run inside its term, current on the calling thread while it runs: the listeners
     * around it, then {@code body}, whose outcome decides the run's unless it set one itself.
     *
     * @param run the run
     * @param termActive tells, when the body returned or threw, whether the run's term is still
     *     active
     * @param body the run itself
     * @return what {@code body} returned
     * @throws Exception what {@code body} threw
     */
    public @Nullable Object run(
            LeaderOnlyRun run, Supplier<Boolean> termActive, Callable<@Nullable Object> body)
            throws Exception {
        List<LeaderOnlyRunListener> current = listeners.get();
        Callable<@Nullable Object> measured =
                () -> {
                    LeaderOnlyRun outer = LeaderOnlyRun.enter(run);
                    try {
                        Object result = body.call();
                        if (run.outcome() == null) {
                            run.outcome(LeaderOnlyRun.ended(null, termActive.get()));
                        }
                        return result;
                    } catch (Throwable ex) {
                        if (run.outcome() == null) {
                            run.outcome(LeaderOnlyRun.ended(cause(ex), termActive.get()));
                        }
                        throw ex;
                    } finally {
                        LeaderOnlyRun.exit(outer);
                    }
                };
        if (current.isEmpty()) {
            return measured.call();
        }
        return around(current, 0, run, measured);
    }

    private @Nullable Object around(
            List<LeaderOnlyRunListener> all,
            int index,
            LeaderOnlyRun run,
            Callable<@Nullable Object> body)
            throws Exception {
        if (index == all.size()) {
            return body.call();
        }
        LeaderOnlyRunListener listener = all.get(index);
        Proceed next = new Proceed(() -> around(all, index + 1, run, body));
        try {
            return listener.around(run, next);
        } catch (Exception | Error ex) {
            if (next.failure == ex) {
                throw ex; // the run's own failure, passed on
            }
            logger.warn("redlease: LeaderOnlyRunListener " + listener + " failed for " + run, ex);
            if (!next.called) {
                return next.call();
            }
            if (next.failure != null) {
                throw rethrow(next.failure);
            }
            return next.result;
        }
    }

    /**
     * Reports a call that did not run.
     *
     * @param run the call, with no token
     * @param outcome one of the skips, or {@link Outcome#REJECTED}
     */
    public void notRun(LeaderOnlyRun run, Outcome outcome) {
        run.outcome(outcome);
        for (LeaderOnlyRunListener listener : listeners.get()) {
            try {
                listener.notRun(run);
            } catch (RuntimeException ex) {
                logger.warn(
                        "redlease: LeaderOnlyRunListener " + listener + " failed for " + run, ex);
            }
        }
    }

    /**
     * Sets the outcome of a run whose body knows better than its return: a once-per-slot run that
     * returned and was not marked.
     *
     * @param run the run, while it runs
     * @param outcome its outcome
     */
    public void settle(LeaderOnlyRun run, Outcome outcome) {
        run.outcome(outcome);
    }

    /** Returns whether any listener hears of runs. */
    public boolean isEmpty() {
        return listeners.get().isEmpty();
    }

    private static Throwable cause(Throwable ex) {
        return ex instanceof UndeclaredThrowableException undeclared
                        && undeclared.getUndeclaredThrowable() != null
                ? undeclared.getUndeclaredThrowable()
                : ex;
    }

    private static Exception rethrow(Throwable failure) {
        if (failure instanceof Error error) {
            throw error;
        }
        return (Exception) failure;
    }

    /** The rest of the chain, once: remembers whether it was called and how it ended. */
    private static final class Proceed implements Callable<@Nullable Object> {

        private final Callable<@Nullable Object> rest;

        boolean called;

        @Nullable Object result;

        @Nullable Throwable failure;

        Proceed(Callable<@Nullable Object> rest) {
            this.rest = rest;
        }

        @Override
        public @Nullable Object call() throws Exception {
            if (called) {
                throw new IllegalStateException(
                        "redlease: a LeaderOnlyRunListener proceeded twice with one run");
            }
            called = true;
            try {
                result = rest.call();
                return result;
            } catch (Exception | Error ex) {
                failure = ex;
                throw ex;
            }
        }
    }
}
