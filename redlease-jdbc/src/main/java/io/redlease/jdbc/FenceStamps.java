package io.redlease.jdbc;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The elections and tokens that one transaction is fenced by, bound to the thread while the
 * transaction runs. {@link FencingTransactionListener} binds it when a transaction begins, with the
 * connection the transaction manager bound for the fenced data source, and stamps it just before
 * the commit; {@link TransactionFencing#fence} adds to it.
 */
final class FenceStamps implements TransactionSynchronization {

    private final TransactionFencing fencing;

    private final @Nullable ConnectionHolder holder;

    private final Map<String, Long> tokens = new LinkedHashMap<>();

    private boolean stamping;

    private boolean stamped;

    private boolean holdsLateWork;

    FenceStamps(TransactionFencing fencing, @Nullable ConnectionHolder holder) {
        this.fencing = fencing;
        this.holder = holder;
    }

    /** The connection the transaction manager bound for the fenced data source at begin. */
    @Nullable ConnectionHolder holder() {
        return holder;
    }

    Map<String, Long> tokens() {
        return tokens;
    }

    /** Whether the stamp has begun: the transaction is committing, or has ended. */
    boolean isStamping() {
        return stamping;
    }

    void startStamping() {
        stamping = true;
    }

    void stamped() {
        stamped = true;
    }

    /**
     * Makes the work that joins the transaction after its end wait in a transaction of the
     * connection (rolled back by {@link TransactionFencing#discardAfterCompletion}) instead of
     * committing as it runs: for every-transaction fencing.
     */
    void holdLateWork() {
        holdsLateWork = true;
    }

    /** Runs first among the transaction's synchronizations. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public void afterCommit() {
        if (holdsLateWork) {
            fencing.holdLateWork(holder);
        }
    }

    void add(String election, long token) {
        @Nullable Long present = tokens.putIfAbsent(election, token);
        if (present != null && present != token) {
            throw new UnfencedTransactionException(
                    "redlease: this transaction is already fenced by token "
                            + present
                            + " of election '"
                            + election
                            + "' and cannot be fenced by another term's token "
                            + token);
        }
    }

    @Override
    public void suspend() {
        TransactionSynchronizationManager.unbindResource(fencing);
    }

    @Override
    public void resume() {
        TransactionSynchronizationManager.bindResource(fencing, this);
    }

    @Override
    public void afterCompletion(int status) {
        stamping = true;
        if (holdsLateWork) {
            fencing.holdLateWork(holder);
        }
        TransactionSynchronizationManager.unbindResourceIfPossible(fencing);
        if (status == STATUS_COMMITTED && stamped) {
            tokens.forEach(fencing::committed);
        }
    }
}
