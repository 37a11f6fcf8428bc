package io.redlease.core;

/**
 * The work an instance does while it leads, run once per won term on a thread of its own.
 *
 * <p>The term ends when the task returns or throws, when the lease is lost or cannot be renewed in
 * time, when {@link Elector#resign()} is called or when the elector stops; the task's thread is
 * then interrupted. A task that means to lead until told otherwise therefore blocks until its term
 * ends, for example with {@link Term#awaitEnd()}. A throwable that ends a term is reported to the
 * observers as {@link Observer.Operation#TASK} and the lease is released as after a return.
 */
@FunctionalInterface
public interface LeaderTask {

    /**
     * Does the leader's work for one term.
     *
     * @param term the term: its token, its {@link Fencer} and whether it is still active
     * @throws Exception to end the term early; reported to the observers
     */
    void lead(Term term) throws Exception;
}
