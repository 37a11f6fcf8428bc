package io.redlease.core;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a term is over or its elector is stopping: by {@link Term#execute} and the other ways
 * to run work in a term before the work starts ({@link #isBeforeStart()}), and by {@link
 * Term#executeReactive} when the end of the term cuts a subscription short.
 */
public class TermEndedException extends NotLeaderException {

    private static final long serialVersionUID = 1L;

    private final transient Term term;

    private final boolean beforeStart;

    TermEndedException(Term term) {
        super(
                term.elector().name(),
                "redlease: term "
                        + term.token()
                        + " of '"
                        + term.elector().name()
                        + "' is over or its elector is stopping");
        this.term = term;
        this.beforeStart = true;
    }

    /**
     * For work the end of its term cut short; {@code cause} is what the work failed with, if any.
     */
    TermEndedException(Term term, @Nullable Throwable cause) {
        super(
                term.elector().name(),
                "redlease: term "
                        + term.token()
                        + " of '"
                        + term.elector().name()
                        + "' ended while its work ran");
        this.term = term;
        this.beforeStart = false;
        if (cause != null) {
            initCause(cause);
        }
    }

    /** Returns whether the work never started: it was refused before it could. */
    public boolean isBeforeStart() {
        return beforeStart;
    }

    /** Returns the term that refused the work. */
    public Term term() {
        return term;
    }
}
