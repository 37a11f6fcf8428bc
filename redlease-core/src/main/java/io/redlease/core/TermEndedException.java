package io.redlease.core;

/**
 * Thrown by {@link Term#execute} when the term is over or its elector is stopping: the work did not
 * run.
 */
public class TermEndedException extends NotLeaderException {

    private static final long serialVersionUID = 1L;

    private final transient Term term;

    TermEndedException(Term term) {
        super(
                term.elector().name(),
                "redlease: term "
                        + term.token()
                        + " of '"
                        + term.elector().name()
                        + "' is over or its elector is stopping");
        this.term = term;
    }

    /** Returns the term that refused the work. */
    public Term term() {
        return term;
    }
}
