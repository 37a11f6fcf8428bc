package io.redlease.core;

import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;

/**
 * Thrown by a fenced write whose outcome is unknown: it may or may not have been applied. No reply
 * came within the term's remaining time, the connection failed or was lost during the call, or the
 * calling thread was interrupted (typically because the term ended) while it waited.
 *
 * <p>If the write was applied, it was applied while its token was still current: the fence checks
 * the token at Redis, atomically with the write, whatever happens to the reply. Treat the write as
 * possibly done: make it idempotent, or read the resource back in a later term. A subtype of
 * Spring's {@link DataAccessException}, so code that catches Redis failures still catches it.
 */
public class FenceOutcomeUnknownException extends DataAccessException {

    private static final long serialVersionUID = 1L;

    private final String election;

    private final long token;

    /**
     * Creates the exception.
     *
     * @param election the election's name
     * @param token the token the write carried
     * @param reason why the outcome is unknown
     * @param cause the failure behind it, if any
     */
    public FenceOutcomeUnknownException(
            String election, long token, String reason, @Nullable Throwable cause) {
        super(
                "redlease: the outcome of a fenced write with token "
                        + token
                        + " of '"
                        + election
                        + "' is unknown: "
                        + reason
                        + "; it may or may not have been applied (if it was, then while the token"
                        + " was current)",
                cause);
        this.election = election;
        this.token = token;
    }

    /** Returns the name of the election whose fence the write went through. */
    public String election() {
        return election;
    }

    /** Returns the token the write carried. */
    public long token() {
        return token;
    }
}
