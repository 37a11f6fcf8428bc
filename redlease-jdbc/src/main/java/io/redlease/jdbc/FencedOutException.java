package io.redlease.jdbc;

import org.springframework.dao.NonTransientDataAccessException;

/**
 * Thrown when a fenced transaction is refused because its election's row in the fence table holds a
 * newer token than the transaction's term: a newer leader has committed, so this one is stale. The
 * transaction is rolled back; none of its writes commit. Retrying does not help.
 */
public class FencedOutException extends NonTransientDataAccessException {

    private static final long serialVersionUID = 1L;

    private final String electionName;

    private final long token;

    private final long newerToken;

    /**
     * Creates the exception.
     *
     * @param electionName the election whose row refused the transaction
     * @param table the fence table
     * @param token the token of the transaction's term
     * @param newerToken the newer token the row holds
     */
    public FencedOutException(String electionName, String table, long token, long newerToken) {
        super(
                "redlease: transaction fenced out of election '"
                        + electionName
                        + "': its term's token is "
                        + token
                        + " but "
                        + table
                        + " already holds the newer token "
                        + newerToken
                        + "; the transaction is rolled back");
        this.electionName = electionName;
        this.token = token;
        this.newerToken = newerToken;
    }

    /** Returns the name of the election whose row refused the transaction. */
    public String electionName() {
        return electionName;
    }

    /** Returns the token of the refused transaction's term. */
    public long token() {
        return token;
    }

    /** Returns the newer token found in the fence table. */
    public long newerToken() {
        return newerToken;
    }
}
