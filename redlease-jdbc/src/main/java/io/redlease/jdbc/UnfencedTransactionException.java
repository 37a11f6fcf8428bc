package io.redlease.jdbc;

import org.springframework.dao.InvalidDataAccessApiUsageException;

/**
 * Thrown when a transaction that must be fenced cannot be: no leadership term for the election on
 * the calling thread, no transaction, a read-only transaction, a transaction whose manager cannot
 * stamp it (no {@link FencingTransactionListener}, another data source, JTA), a transaction whose
 * commit has begun, or no fencing in place at all. It is thrown before the transaction's work runs
 * or, at the latest, instead of its commit, so nothing is committed unfenced. It is a data access
 * usage error: Spring's exception translation passes it through as it is.
 */
public class UnfencedTransactionException extends InvalidDataAccessApiUsageException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and how to fix it
     */
    public UnfencedTransactionException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what is missing and how to fix it
     * @param cause the refusal this one adds context to
     */
    public UnfencedTransactionException(String message, Throwable cause) {
        super(message, cause);
    }
}
