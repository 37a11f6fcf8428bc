package io.redlease.jdbc;

import org.jspecify.annotations.Nullable;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * Stamps fenced transactions just before they commit; add it to the transaction manager of the
 * fenced {@code DataSource} with {@code addListener} (Spring Boot adds it to every transaction
 * manager bean on that data source). Without it, {@link TransactionFencing#fence()} refuses the
 * manager's transactions.
 *
 * <p>Created with an election id, it also fences every read-write transaction the manager begins
 * with the calling thread's term of that election: the global form of {@link Fenced}. A read-write
 * transaction with no term bound to the thread is refused <em>before</em> it begins, with {@link
 * UnfencedTransactionException} from the call that would have begun it, so no work runs in it and
 * an enclosing transaction goes on untouched. Read-only transactions are left alone.
 *
 * <p>The stamp runs in {@link #beforeCommit}, which Spring calls after every synchronization's
 * before-commit and before-completion work (so a {@code BEFORE_COMMIT} event listener that runs a
 * fenced transaction of its own does not wait for the fence row this transaction would hold), right
 * before the physical commit; the transaction is flushed first, so Hibernate's pending writes do
 * not run while the fence row is locked.
 */
public final class FencingTransactionListener implements TransactionExecutionListener {

    private final TransactionFencing fencing;

    private final @Nullable String electionId;

    /**
     * Creates the listener that stamps transactions fenced with {@link TransactionFencing#fence()}
     * or {@link Fenced}.
     *
     * @param fencing the fencing
     */
    public FencingTransactionListener(TransactionFencing fencing) {
        this.fencing = fencing;
        this.electionId = null;
    }

    /**
     * Creates the listener that also fences every read-write transaction the manager begins.
     *
     * @param fencing the fencing
     * @param electionId the election whose term fences the transactions; empty for the main one
     * @throws io.redlease.core.UnknownElectionException if there is no such election
     */
    public FencingTransactionListener(TransactionFencing fencing, String electionId) {
        fencing.checkElection(electionId);
        this.fencing = fencing;
        this.electionId = electionId;
    }

    /** Returns whether it fences every read-write transaction, not only fenced ones. */
    public boolean fencesAllTransactions() {
        return electionId != null;
    }

    /** Returns the fencing. */
    public TransactionFencing fencing() {
        return fencing;
    }

    @Override
    public void beforeBegin(TransactionExecution transaction) {
        if (electionId == null || transaction.isReadOnly()) {
            return;
        }
        if (transaction instanceof DefaultTransactionStatus status
                && !status.isNewSynchronization()) {
            throw new UnfencedTransactionException(
                    "redlease: "
                            + this
                            + " cannot fence a transaction without transaction synchronization;"
                            + " set the transaction manager's transactionSynchronization to"
                            + " SYNCHRONIZATION_ALWAYS or SYNCHRONIZATION_ON_ACTUAL_TRANSACTION");
        }
        fencing.requireTerm(electionId);
    }

    @Override
    public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
        if (beginFailure != null || !transaction.isNewTransaction()) {
            return;
        }
        FenceStamps stamps = fencing.begin();
        if (stamps != null && electionId != null && !transaction.isReadOnly()) {
            // the term was checked in beforeBegin; a missing connection of the fenced data source
            // refuses the commit
            stamps.add(fencing.electionName(electionId), fencing.requireTerm(electionId).token());
        }
    }

    @Override
    public void beforeCommit(TransactionExecution transaction) {
        if (transaction.isNewTransaction()) {
            fencing.stampBeforeCommit(transaction);
        }
    }

    @Override
    public String toString() {
        return "FencingTransactionListener["
                + fencing.table().name()
                + (electionId == null
                        ? ""
                        : ", all transactions of election '"
                                + (electionId.isEmpty() ? "default" : electionId)
                                + "'")
                + "]";
    }
}
