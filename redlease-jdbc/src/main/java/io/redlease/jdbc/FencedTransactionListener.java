package io.redlease.jdbc;

/**
 * Hears the outcome of fenced transactions and of the claims of newly elected terms, for metrics.
 * Transaction outcomes are reported on the thread that committed the transaction, claims on the
 * thread that claims; keep it quick. An exception it throws is logged and ignored.
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

    /**
     * A newly elected term claimed its election's row of a fence table: from now on no fenced
     * transaction of an older term commits there unless it stamped before.
     *
     * @param electionName the election name
     * @param token the token of the newly elected term
     * @param table the fence table
     */
    default void onClaimed(String electionName, long token, String table) {}

    /**
     * A newly elected term could not claim its election's row of a fence table (the database is
     * unreachable, or the row's lock was not free in time); the claim is retried while the term
     * lasts.
     *
     * @param electionName the election name
     * @param token the token of the newly elected term
     * @param table the fence table
     * @param error what failed
     */
    default void onClaimFailed(String electionName, long token, String table, Throwable error) {}
}
