package io.redlease.core;

import java.util.concurrent.CompletionStage;

/**
 * Work an elector waits for on a graceful step-down before it releases the lease: typically
 * stopping the term's leader-only consumers, so that a successor starts its own only after they
 * have stopped.
 *
 * <p>Called once per term that ends gracefully (the elector stops, {@link Elector#resign()}, the
 * leader task returns or throws), after the term has ended (its leader task and calls are
 * interrupted) and before the release; on the election's callback lane, in order with the observer
 * callbacks, never on the engine's threads. The release waits until every hook's stage has
 * completed or the drain timeout has passed (when stopping, whatever is left of it), whichever
 * comes first; a hook that overruns is named in a WARN and the lease is released anyway.
 *
 * <p>A term that ends involuntarily (its lease expired or was taken over, an internal failure) does
 * not wait: the lease is already gone or going, so the hook is not called. Work that must stop in
 * every case watches {@link Term#whenEnded()} instead.
 */
@FunctionalInterface
public interface BeforeRelease {

    /**
     * Starts the work to finish before the lease of an ended term is released.
     *
     * @param term the ended term
     * @return a stage that completes when the work is done; its failure is logged at WARN and does
     *     not stop the release
     * @throws Exception a failure, logged at WARN; the lease is released anyway
     */
    CompletionStage<?> beforeRelease(Term term) throws Exception;
}
