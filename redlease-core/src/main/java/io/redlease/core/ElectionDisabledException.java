package io.redlease.core;

/**
 * Thrown by a disabled {@link Elections} registry ({@link Elections#disabled}) and the {@link
 * LeadershipContext} over it, where an answer needs an election: an elector, a partitioned
 * election, a fencer that must exist ({@link LeadershipContext#requireFencer()}). No instance leads
 * while leader election is disabled, so no write can be fenced; the message says why election is
 * off and how to turn it on.
 *
 * <p>It is not a {@link NotLeaderException}: code that treats "not the leader now" as routine (and
 * skips its work) still fails here, where the application's configuration is the cause.
 */
public class ElectionDisabledException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String reason;

    /**
     * Creates the exception.
     *
     * @param what what was asked for, such as "no fencer"
     * @param reason why leader election is disabled, and how to enable it
     */
    public ElectionDisabledException(String what, String reason) {
        super("redlease: " + what + ": " + reason);
        this.reason = reason;
    }

    /** Returns why leader election is disabled, and how to enable it. */
    public String reason() {
        return reason;
    }
}
