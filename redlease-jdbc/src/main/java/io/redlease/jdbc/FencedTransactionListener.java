package io.redlease.jdbc;

/**
 * Hears the outcome of fenced transactions, for metrics. Called on the thread that committed the
 * transaction; keep it quick. An exception it throws is logged and ignored.
 */
public interface FencedTransactionListener {

    /**
     * A fenced transaction committed under {@code token}.
     *
     * @param electionName the election name
     * @param token the token of the transaction's term
     */
    default void onCommitted(String electionName, long token) {}

    /**
     * A fenced transaction was refused and rolled back because the fence table holds a newer token.
     *
     * @param electionName the election name
     * @param token the token of the transaction's term
     * @param newerToken the newer token in the fence table
     */
    default void onRefused(String electionName, long token, long newerToken) {}
}
