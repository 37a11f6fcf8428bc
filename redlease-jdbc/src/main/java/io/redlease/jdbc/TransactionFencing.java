package io.redlease.jdbc;

import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Fences Spring-managed transactions on one {@code DataSource} with the leadership term bound to
 * the calling thread.
 *
 * <p>{@link #fence()} marks the transaction in progress as fenced by the term of an election that
 * {@link LeadershipContext} returns on this thread (in a {@code @LeaderOnly} method, a {@code
 * LeaderTask} or {@link Term#execute}, the term bound to the thread). Just before the transaction
 * commits, the term's token is stamped into the election's row of the {@link FenceTable} on the
 * transaction's own connection, and the row stays locked until the commit. If the row already holds
 * a newer token, the commit fails with {@link FencedOutException} and the transaction is rolled
 * back. So among the fenced transactions of an election, an older term's transaction never commits
 * after a newer term's transaction committed; whatever wrote through the transaction's connection
 * (JdbcClient, JdbcTemplate, JPA, jOOQ, MyBatis) commits or rolls back with it.
 *
 * <p>If there is no term, no transaction, a read-only transaction, or a transaction that does not
 * hold a connection of this data source, {@link #fence()} throws {@link
 * UnfencedTransactionException}; call it before the transaction writes, and the work never runs
 * unfenced. {@code @Fenced} and the global setting call it for you.
 */
public class TransactionFencing {

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    private final FenceTable table;

    private final LeadershipContext leadership;

    private final FencedTransactionListener listener;

    /**
     * Creates the fencing.
     *
     * @param table the fence table, on the fenced data source
     * @param leadership the leadership context of the main election
     */
    public TransactionFencing(FenceTable table, LeadershipContext leadership) {
        this(table, leadership, new FencedTransactionListener() {});
    }

    /**
     * Creates the fencing with a listener for the outcomes.
     *
     * @param table the fence table, on the fenced data source
     * @param leadership the leadership context of the main election
     * @param listener hears every committed and every refused fenced transaction
     */
    public TransactionFencing(
            FenceTable table, LeadershipContext leadership, FencedTransactionListener listener) {
        this.table = table;
        this.leadership = leadership;
        this.listener = listener;
    }

    /** Returns the fence table. */
    public FenceTable table() {
        return table;
    }

    /**
     * Fences the transaction in progress with the calling thread's term of the main election.
     *
     * @throws UnfencedTransactionException if it cannot be fenced; nothing was registered
     */
    public void fence() {
        fence("");
    }

    /**
     * Fences the transaction in progress with the calling thread's term of an election. Calling it
     * again in the same transaction with the same term does nothing.
     *
     * @param electionId the election id; empty for the main election
     * @throws UnfencedTransactionException if it cannot be fenced; nothing was registered
     * @throws io.redlease.core.UnknownElectionException if there is no such election
     */
    public void fence(String electionId) {
        LeadershipContext context =
                electionId.isEmpty() ? leadership : leadership.election(electionId);
        String election = context.elector().name();
        if (!TransactionSynchronizationManager.isActualTransactionActive()
                || !TransactionSynchronizationManager.isSynchronizationActive()) {
            throw new UnfencedTransactionException(
                    "redlease: a fenced transaction of election '"
                            + election
                            + "' needs a transaction in progress, and there is none: add"
                            + " @Transactional (or run it in a TransactionTemplate)");
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new UnfencedTransactionException(
                    "redlease: a read-only transaction cannot be fenced (the fence is a write);"
                            + " election '"
                            + election
                            + "'");
        }
        if (!(TransactionSynchronizationManager.getResource(table.dataSource())
                instanceof ConnectionHolder)) {
            throw new UnfencedTransactionException(
                    "redlease: the transaction in progress holds no connection of the fenced"
                            + " DataSource, so its writes cannot be fenced by "
                            + table.name()
                            + "; run it with a DataSourceTransactionManager or JpaTransactionManager"
                            + " on that DataSource (JTA is not supported)");
        }
        Term term =
                context.boundTerm()
                        .orElseThrow(
                                () ->
                                        new UnfencedTransactionException(
                                                "redlease: a fenced transaction needs a"
                                                        + " leadership term of election '"
                                                        + election
                                                        + "' on its thread (a @LeaderOnly"
                                                        + " method, a LeaderTask or"
                                                        + " Term.execute), and none is bound"
                                                        + " to this thread; the transaction"
                                                        + " is not run"));
        stamps().add(election, term.token());
    }

    /** Throws {@code UnknownElectionException} unless the election id is configured. */
    void checkElection(String electionId) {
        leadership.election(electionId);
    }

    private Stamps stamps() {
        Object bound = TransactionSynchronizationManager.getResource(this);
        if (bound instanceof Stamps stamps) {
            return stamps;
        }
        Stamps stamps = new Stamps();
        TransactionSynchronizationManager.bindResource(this, stamps);
        TransactionSynchronizationManager.registerSynchronization(stamps);
        return stamps;
    }

    @Override
    public String toString() {
        return "TransactionFencing[" + table.name() + "]";
    }

    /** The elections and tokens a transaction is fenced by; stamps them before it commits. */
    private final class Stamps implements TransactionSynchronization {

        private final Map<String, Long> tokens = new LinkedHashMap<>();

        private boolean stamped;

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
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }

        @Override
        public void suspend() {
            TransactionSynchronizationManager.unbindResource(TransactionFencing.this);
        }

        @Override
        public void resume() {
            TransactionSynchronizationManager.bindResource(TransactionFencing.this, this);
        }

        @Override
        public void beforeCommit(boolean readOnly) {
            for (Map.Entry<String, Long> entry : tokens.entrySet()) {
                try {
                    table.stamp(entry.getKey(), entry.getValue());
                } catch (FencedOutException ex) {
                    if (logger.isDebugEnabled()) {
                        logger.debug(
                                "Refused a fenced transaction of election '"
                                        + ex.electionName()
                                        + "': token "
                                        + ex.token()
                                        + " is older than "
                                        + ex.newerToken()
                                        + " in "
                                        + table.name());
                    }
                    notify(
                            () ->
                                    listener.onRefused(
                                            ex.electionName(), ex.token(), ex.newerToken()));
                    throw ex;
                }
            }
            stamped = true;
        }

        @Override
        public void afterCompletion(int status) {
            TransactionSynchronizationManager.unbindResourceIfPossible(TransactionFencing.this);
            if (status == STATUS_COMMITTED && stamped) {
                tokens.forEach(
                        (election, token) -> notify(() -> listener.onCommitted(election, token)));
            }
        }

        private void notify(Runnable call) {
            try {
                call.run();
            } catch (RuntimeException ex) {
                logger.warn("A FencedTransactionListener threw; ignored", ex);
            }
        }
    }
}
