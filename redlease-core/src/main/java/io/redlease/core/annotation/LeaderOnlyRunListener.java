package io.redlease.core.annotation;

import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * Hears of each {@link LeaderOnly} call, on the thread that makes it: so that a run can be observed
 * (a span, a timer) and its election, token, partition and slot put in the logging context while it
 * runs.
 *
 * <p>A call that runs goes through {@link #around} of every listener, nested in the order the
 * listeners were found, inside its term: what a listener makes current before it proceeds (an
 * observation's scope, MDC entries) is current for the method, and so for the fenced writes it
 * makes. A call that does not run (skipped, or rejected) is reported to {@link #notRun}. A
 * once-per-slot run is reported once, from its start in its term to its mark, with its slot; the
 * method's own call inside it is not reported again.
 *
 * <p>{@link LeaderOnlyAnnotationBeanPostProcessor} uses every bean of this type in its bean
 * factory, found once all singletons exist (calls made while the context is still starting are not
 * reported). A listener that throws before it proceeds is logged at WARN and the run goes on
 * without it; one that throws after is logged at WARN and does not change the call's result. Calls
 * of methods returning a reactive type or a {@link java.util.concurrent.CompletionStage} are not
 * reported, whether they run or not (their work goes on after the call returns, elsewhere); a
 * once-per-slot job's reactive run is, from its subscription to its mark.
 */
public interface LeaderOnlyRunListener {

    /**
     * Runs a leader-only run: calls {@code proceed} once, on the calling thread, and returns what
     * it returns or throws what it throws. The run's {@link LeaderOnlyRun#outcome() outcome} is
     * known once {@code proceed} returned or threw. The default only proceeds.
     *
     * @param run the run
     * @param proceed the run itself (the next listener, then the method)
     * @return what {@code proceed} returned
     * @throws Exception what {@code proceed} threw
     */
    default @Nullable Object around(LeaderOnlyRun run, Callable<@Nullable Object> proceed)
            throws Exception {
        return proceed.call();
    }

    /**
     * Called after a call did not run: its outcome is one of the skips or {@code rejected}. The
     * default does nothing.
     *
     * @param run the call, with no token
     */
    default void notRun(LeaderOnlyRun run) {}
}
