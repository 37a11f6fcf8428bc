package io.redlease.jdbc;

import org.springframework.transaction.TransactionUsageException;

/**
 * Thrown when a transaction that must be fenced cannot be: no leadership term for the election on
 * the calling thread, no transaction, a read-only transaction, or a transaction that does not hold
 * a connection of the fenced {@code DataSource}. It is thrown before the transaction's work runs,
 * so nothing is written unfenced.
 */
public class UnfencedTransactionException extends TransactionUsageException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and how to fix it
     */
    public UnfencedTransactionException(String message) {
        super(message);
    }
}
