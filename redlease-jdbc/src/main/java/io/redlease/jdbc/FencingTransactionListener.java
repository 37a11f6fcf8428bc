package io.redlease.jdbc;

import org.jspecify.annotations.Nullable;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

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
 * an enclosing transaction goes on untouched. A savepoint ({@code PROPAGATION_NESTED}) needs the
 * term too, and is covered by the stamp of the transaction it belongs to. Read-only transactions
 * are not fenced; on MySQL and MariaDB, where the connection's read-only flag does not stop writes,
 * each is begun with {@code SET TRANSACTION READ ONLY} so that the database refuses its writes.
 * Work that joins such a transaction after its commit (an {@code afterCommit} or {@code
 * afterCompletion} callback) is rolled back before the connection is released, so it never commits
 * unfenced: run it in a new transaction ({@code PROPAGATION_REQUIRES_NEW}), which is fenced.
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
        if (transaction.isNested()) {
            // a savepoint of a transaction of this manager: its stamp covers it
            fencing.requireTerm(electionId);
            if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
                throw new UnfencedTransactionException(
                        "redlease: a read-write savepoint (PROPAGATION_NESTED) of a read-only"
                                + " transaction cannot be fenced; make the outer transaction"
                                + " read-write");
            }
            return;
        }
        if (transaction instanceof DefaultTransactionStatus status
                && !status.isNewSynchronization()) {
            throw new UnfencedTransactionException(
                    "redlease: "
                            + this
                            + " cannot fence a transaction without transaction synchronization;"
                            + " set the transaction manager's transactionSynchronization to"
                            + " SYNCHRONIZATION_ALWAYS or SYNCHRONIZATION_ON_ACTUAL_TRANSACTION"
                            + " (and begin no transaction in an after-commit or after-completion"
                            + " callback of another one)");
        }
        fencing.requireTerm(electionId);
    }

    @Override
    public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
        if (beginFailure != null) {
            return;
        }
        if (transaction.isNested()) {
            if (electionId != null && !transaction.isReadOnly()) {
                // the savepoint's writes commit with the outer transaction: fence it
                fencing.fence(electionId);
            }
            return;
        }
        if (!transaction.isNewTransaction()) {
            return;
        }
        FenceStamps stamps = fencing.begin();
        if (stamps == null || electionId == null) {
            return;
        }
        stamps.holdLateWork();
        if (transaction.isReadOnly()) {
            // left unfenced, so its writes must be refused by the database
            fencing.enforceReadOnly();
        } else {
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
    public void afterCommit(TransactionExecution transaction, @Nullable Throwable commitFailure) {
        if (electionId != null && transaction.isNewTransaction()) {
            fencing.discardAfterCompletion();
        }
    }

    @Override
    public void afterRollback(
            TransactionExecution transaction, @Nullable Throwable rollbackFailure) {
        if (electionId != null && transaction.isNewTransaction()) {
            fencing.discardAfterCompletion();
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
