package io.redlease.core;

/**
 * Thrown when leader-only work is attempted by an instance that does not lead the election: a
 * {@code @LeaderOnly} method with the reject policy, {@link LeadershipContext#requireFencer()}, or
 * {@link Term#execute} on a term that already ended.
 */
public class NotLeaderException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String election;

    /**
     * Creates the exception.
     *
     * @param election the election's name
     * @param message what was refused
     */
    public NotLeaderException(String election, String message) {
        super(message);
        this.election = election;
    }

    /** Returns the name of the election this instance does not lead. */
    public String election() {
        return election;
    }
}
