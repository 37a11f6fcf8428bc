package io.redlease.jdbc;

import org.jspecify.annotations.Nullable;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Fences every read-write transaction that a transaction manager begins on the fenced {@code
 * DataSource}: the global form of {@link Fenced}. Add it to the transaction manager with {@code
 * addListener}.
 *
 * <p>Right after a transaction begins it is fenced with the calling thread's term; when there is
 * none, the transaction is rolled back at once and {@link UnfencedTransactionException} is thrown
 * from the call that began it, so no work runs in it. Read-only transactions and transactions that
 * hold no connection of the fenced data source (another data source's) are left alone.
 */
public final class FencingTransactionListener implements TransactionExecutionListener {

    private final TransactionFencing fencing;

    private final PlatformTransactionManager transactionManager;

    private final String electionId;

    /**
     * Creates the listener.
     *
     * @param fencing the fencing
     * @param transactionManager the transaction manager the listener is added to
     * @param electionId the election whose term fences the transactions; empty for the main one
     */
    public FencingTransactionListener(
            TransactionFencing fencing,
            PlatformTransactionManager transactionManager,
            String electionId) {
        this.fencing = fencing;
        this.transactionManager = transactionManager;
        this.electionId = electionId;
    }

    @Override
    public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
        if (beginFailure != null
                || !transaction.isNewTransaction()
                || transaction.isReadOnly()
                || !TransactionSynchronizationManager.hasResource(fencing.table().dataSource())) {
            return;
        }
        try {
            fencing.fence(electionId);
        } catch (RuntimeException ex) {
            if (transaction instanceof TransactionStatus status) {
                transactionManager.rollback(status);
            }
            throw ex;
        }
    }

    @Override
    public String toString() {
        return "FencingTransactionListener[" + fencing.table().name() + "]";
    }
}
