package io.redlease.core;

/**
 * Thrown by the throwing forms of the fenced writes ({@link Fencer#setOrThrow}, {@link
 * Fencer#hsetOrThrow}, {@link Fencer#evalOrThrow} and their {@link ReactiveFencer} forms) when the
 * fence refuses the write: a newer term of the election exists, or this term had passed its local
 * deadline when the write was attempted (such a write is not sent).
 *
 * <p>The write was not applied, and no retry with this token can succeed: the work belongs to the
 * newer leader now. Let the exception propagate so the work is redone there: a listener's message
 * is requeued rather than acknowledged, a once-per-slot run leaves its slot unmarked for the next
 * term.
 */
public class FenceRefusedException extends NotLeaderException {

    private static final long serialVersionUID = 1L;

    private final long token;

    /**
     * Creates the exception.
     *
     * @param election the election's name
     * @param token the token the refused write carried
     */
    public FenceRefusedException(String election, long token) {
        super(
                election,
                "redlease: a fenced write with token "
                        + token
                        + " of '"
                        + election
                        + "' was refused: a newer term exists (or this term had passed its"
                        + " deadline); the write was not applied, and retrying with this token"
                        + " cannot succeed");
        this.token = token;
    }

    /** Returns the token the refused write carried. */
    public long token() {
        return token;
    }
}
