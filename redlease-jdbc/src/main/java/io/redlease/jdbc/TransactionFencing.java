package io.redlease.jdbc;

import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Fences Spring-managed transactions on one {@code DataSource} with the leadership term bound to
 * the calling thread.
 *
 * <p>{@link #fence()} marks the transaction in progress as fenced by the term of an election that
 * is bound to the calling thread (a {@code @LeaderOnly} method, a {@code LeaderTask} or {@link
 * Term#execute}). Just before the transaction commits — after every synchronization's before-commit
 * and before-completion work and after a flush of the transaction (Hibernate's pending writes) —
 * the {@link FencingTransactionListener} on its transaction manager stamps the term's token into
 * the election's row of the {@link FenceTable} on the transaction's own connection, and the row
 * stays locked until the commit. If the row already holds a newer token, the commit fails with
 * {@link FencedOutException} and the transaction is rolled back. So among the fenced transactions
 * of an election, an older term's transaction never commits after a newer term's transaction
 * committed or after a newer term claimed the row ({@link FenceClaims}); whatever wrote through the
 * transaction's connection (JdbcClient, JdbcTemplate, JPA, jOOQ, MyBatis) commits or rolls back
 * with it.
 *
 * <p>{@link #fence()} throws {@link UnfencedTransactionException}, registering nothing, when there
 * is no term bound to the thread, no transaction, a read-only transaction, a transaction whose
 * manager has no {@link FencingTransactionListener} of this fencing, a transaction that holds no
 * connection of the fenced data source that its manager bound (another data source's transaction,
 * JTA), or a transaction that was already stamped (its commit has begun). Call it before the
 * transaction writes, and the work never commits unfenced. {@code @Fenced} and the global setting
 * call it for you.
 */
public class TransactionFencing {

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    private final FenceTable table;

    private final LeadershipContext leadership;

    private final FencedTransactionListener listener;

    private volatile @Nullable Boolean readOnlyNeedsStatement;

    /** The key of the connection whose auto-commit {@link #holdLateWork} turned off. */
    private final Object lateWork = new Object();

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
        LeadershipContext context = context(electionId);
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
        FenceStamps stamps = bound();
        if (stamps == null) {
            throw new UnfencedTransactionException(
                    "redlease: the transaction in progress was not begun by a transaction manager"
                            + " of the fenced DataSource that has a FencingTransactionListener of "
                            + this
                            + ", so it cannot be stamped just before its commit. Run it with the"
                            + " DataSourceTransactionManager or JpaTransactionManager of that"
                            + " DataSource (Spring Boot adds the listener to every transaction"
                            + " manager bean on it; otherwise call transactionManager.addListener("
                            + "new FencingTransactionListener(transactionFencing))). JTA and"
                            + " transaction managers of another DataSource cannot be fenced");
        }
        checkConnection(stamps);
        if (stamps.isStamping()) {
            throw new UnfencedTransactionException(
                    "redlease: the transaction in progress was already stamped (its commit has"
                            + " begun), so a fence of election '"
                            + election
                            + "' asked for now would not be stamped; fence the transaction"
                            + " before it commits, or run this work in a new transaction");
        }
        stamps.add(election, requireTerm(context).token());
    }

    /** Throws {@code UnknownElectionException} unless the election id is configured. */
    void checkElection(String electionId) {
        leadership.election(electionId);
    }

    /**
     * Returns the term bound to the calling thread for an election.
     *
     * @throws UnfencedTransactionException if none is bound
     */
    Term requireTerm(String electionId) {
        return requireTerm(context(electionId));
    }

    private Term requireTerm(LeadershipContext context) {
        return context.boundTerm()
                .orElseThrow(
                        () ->
                                new UnfencedTransactionException(
                                        "redlease: a fenced transaction needs a leadership term"
                                                + " of election '"
                                                + context.elector().name()
                                                + "' on its thread (a @LeaderOnly method, a"
                                                + " LeaderTask or Term.execute), and none is bound"
                                                + " to this thread; the transaction is not run"));
    }

    /** Returns the name of an election, by id. */
    String electionName(String electionId) {
        return context(electionId).elector().name();
    }

    private LeadershipContext context(String electionId) {
        return electionId.isEmpty() ? leadership : leadership.election(electionId);
    }

    /**
     * Binds the stamps of a transaction that just began on a transaction manager with the listener,
     * with the connection it bound for the fenced data source; does nothing when they are bound
     * already (a second listener of this fencing) or synchronization is off.
     */
    @Nullable FenceStamps begin() {
        FenceStamps present = bound();
        if (present != null || !TransactionSynchronizationManager.isSynchronizationActive()) {
            return present;
        }
        @Nullable Object holder =
                TransactionSynchronizationManager.getResource(table.transactionalDataSource());
        FenceStamps stamps =
                new FenceStamps(
                        this, holder instanceof ConnectionHolder connection ? connection : null);
        TransactionSynchronizationManager.bindResource(this, stamps);
        TransactionSynchronizationManager.registerSynchronization(stamps);
        return stamps;
    }

    /**
     * Stamps the transaction's tokens just before it commits, after every synchronization's
     * before-commit and before-completion work: first flushes the transaction (Hibernate writes its
     * pending changes), then takes the fence row's lock.
     */
    void stampBeforeCommit(TransactionExecution transaction) {
        FenceStamps stamps = bound();
        if (stamps == null || stamps.isStamping()) {
            return; // nothing to stamp, or another listener of this fencing stamped it
        }
        stamps.startStamping();
        if (stamps.tokens().isEmpty()) {
            return;
        }
        checkConnection(stamps);
        if (transaction instanceof TransactionStatus status) {
            status.flush();
        }
        for (Map.Entry<String, Long> entry : stamps.tokens().entrySet()) {
            try {
                table.stamp(entry.getKey(), entry.getValue());
            } catch (FencedOutException ex) {
                if (logger.isDebugEnabled()) {
                    logger.debug(
                            "redlease: refused a fenced transaction of election '"
                                    + ex.electionName()
                                    + "': token "
                                    + ex.token()
                                    + " is older than "
                                    + ex.newerToken()
                                    + " in "
                                    + table.name());
                }
                notify(() -> listener.onRefused(ex.electionName(), ex.token(), ex.newerToken()));
                throw ex;
            }
        }
        stamps.stamped();
    }

    /**
     * Makes the read-only transaction that just began on the fenced data source read-only in the
     * database where the connection's read-only flag does not stop writes (MySQL, MariaDB): its
     * writes are then refused instead of committing unfenced.
     */
    void enforceReadOnly() {
        if (!(TransactionSynchronizationManager.getResource(table.transactionalDataSource())
                instanceof ConnectionHolder holder)) {
            return;
        }
        Connection connection = holder.getConnection();
        try {
            if (readOnlyNeedsStatement(connection)) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET TRANSACTION READ ONLY");
                }
            }
        } catch (SQLException ex) {
            throw new UnfencedTransactionException(
                    "redlease: a read-only transaction on "
                            + table.name()
                            + "'s DataSource could not be made read-only in the database, so its"
                            + " writes would commit unfenced; it is not run",
                    ex);
        }
    }

    private boolean readOnlyNeedsStatement(Connection connection) throws SQLException {
        Boolean needed = readOnlyNeedsStatement;
        if (needed == null) {
            String product =
                    connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
            needed = product.contains("mysql") || product.contains("mariadb");
            readOnlyNeedsStatement = needed;
        }
        return needed;
    }

    /**
     * Turns auto-commit off again on the connection of a transaction that has ended, if its manager
     * restored it already (Hibernate does at its commit), so that work joining the ended
     * transaction in after-commit or after-completion callbacks does not commit as it runs; {@link
     * #discardAfterCompletion} rolls it back and restores auto-commit.
     */
    void holdLateWork(@Nullable ConnectionHolder holder) {
        if (holder == null
                || TransactionSynchronizationManager.getResource(table.transactionalDataSource())
                        != holder) {
            return;
        }
        try {
            Connection connection = holder.getConnection();
            if (connection.getAutoCommit()) {
                connection.setAutoCommit(false);
                TransactionSynchronizationManager.unbindResourceIfPossible(lateWork);
                TransactionSynchronizationManager.bindResource(lateWork, connection);
            }
        } catch (SQLException | RuntimeException ex) {
            logger.warn(
                    "redlease: could not hold the work that joins a fenced transaction after its"
                            + " end on "
                            + table.name()
                            + "'s DataSource; it may commit unfenced",
                    ex);
        }
    }

    /**
     * Rolls back what joined a transaction of every-transaction fencing after its commit or
     * rollback (an after-commit or after-completion callback), before the transaction manager
     * releases the connection or restores auto-commit, which would commit it unfenced.
     */
    void discardAfterCompletion() {
        @Nullable Object held =
                TransactionSynchronizationManager.unbindResourceIfPossible(lateWork);
        if (!(TransactionSynchronizationManager.getResource(table.transactionalDataSource())
                instanceof ConnectionHolder holder)) {
            return;
        }
        try {
            Connection connection = holder.getConnection();
            if (!connection.getAutoCommit()) {
                connection.rollback();
                if (held == connection) {
                    connection.setAutoCommit(true);
                }
            }
        } catch (SQLException | RuntimeException ex) {
            logger.warn(
                    "redlease: could not roll back the work that joined a fenced transaction after"
                            + " its end on "
                            + table.name()
                            + "'s DataSource; it may commit unfenced when the connection is"
                            + " released",
                    ex);
        }
    }

    /** Hears a committed fenced transaction. */
    void committed(String election, long token) {
        notify(() -> listener.onCommitted(election, token));
    }

    /** Throws unless the transaction still holds the connection its manager bound at begin. */
    private void checkConnection(FenceStamps stamps) {
        @Nullable ConnectionHolder holder = stamps.holder();
        if (holder == null
                || TransactionSynchronizationManager.getResource(table.transactionalDataSource())
                        != holder) {
            throw new UnfencedTransactionException(
                    "redlease: the transaction in progress holds no connection of the fenced"
                            + " DataSource that its transaction manager bound when it began, so"
                            + " its writes cannot be fenced by "
                            + table.name()
                            + "; run it with a DataSourceTransactionManager or"
                            + " JpaTransactionManager on that DataSource (JTA is not supported)");
        }
    }

    private @Nullable FenceStamps bound() {
        return TransactionSynchronizationManager.getResource(this) instanceof FenceStamps stamps
                ? stamps
                : null;
    }

    private void notify(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException ex) {
            logger.warn("redlease: a FencedTransactionListener threw; ignored", ex);
        }
    }

    @Override
    public String toString() {
        return "TransactionFencing[" + table.name() + "]";
    }
}
