package io.redlease.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

/**
 * The fence table: one row per election, {@code (name, token, stamps)}, holding the newest token
 * that claimed the row or committed a fenced transaction, and how many fenced transactions
 * committed.
 *
 * <p>{@link #stamp} runs on the connection of the transaction in progress (through {@link
 * JdbcTemplate}, so {@code DataSourceUtils} finds the connection the transaction manager bound to
 * the thread). It raises the row's token to the term's token with one conditional update, which
 * takes the row's lock and keeps it until the transaction ends, then reads the row back: a newer
 * token means the transaction is refused. The update always changes the row (it counts {@code
 * stamps}), so the read that follows sees the transaction's own version of the row on every
 * database, MySQL's consistent reads included.
 *
 * <p>{@link #claim} and {@link #addRow} run in a transaction of their own on a connection of their
 * own, and commit it whatever the pool's auto-commit setting.
 */
public final class FenceTable {

    /** The default table name. */
    public static final String DEFAULT_NAME = "redlease_fence";

    private static final Pattern NAME =
            Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)?");

    private final DataSource dataSource;

    private final DataSource target;

    private final String name;

    private final JdbcTemplate jdbc;

    private final String stamp;

    private final String claim;

    private final String read;

    private final String insert;

    /**
     * Creates the table accessor for {@link #DEFAULT_NAME}.
     *
     * @param dataSource the fenced data source
     */
    public FenceTable(DataSource dataSource) {
        this(dataSource, DEFAULT_NAME);
    }

    /**
     * Creates the table accessor.
     *
     * @param dataSource the fenced data source; a {@link TransactionAwareDataSourceProxy} stands
     *     for its target, as Spring's transaction managers treat it
     * @param name the table name: a plain SQL identifier, optionally schema-qualified
     * @throws IllegalArgumentException if the name is not such an identifier, or the data source is
     *     or wraps an {@code AbstractRoutingDataSource}
     */
    public FenceTable(DataSource dataSource, String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "redlease: fence table name must be a plain SQL identifier, optionally"
                            + " schema-qualified (letters, digits, _ and $, not starting with a"
                            + " digit), but was '"
                            + name
                            + "'");
        }
        for (DataSource each = dataSource; each != null; ) {
            if (each instanceof AbstractRoutingDataSource) {
                throw new IllegalArgumentException(
                        "redlease: the fenced DataSource "
                                + dataSource
                                + " is or wraps an AbstractRoutingDataSource, whose transactions"
                                + " write to whichever database it routes to; one fence table"
                                + " cannot fence them. Fence one target DataSource.");
            }
            each =
                    each instanceof DelegatingDataSource delegating
                            ? delegating.getTargetDataSource()
                            : null;
        }
        this.dataSource = dataSource;
        this.target =
                dataSource instanceof TransactionAwareDataSourceProxy proxy
                                && proxy.getTargetDataSource() != null
                        ? proxy.getTargetDataSource()
                        : dataSource;
        this.name = name;
        this.jdbc = new JdbcTemplate(target);
        this.stamp =
                "UPDATE "
                        + name
                        + " SET token = CASE WHEN token < ? THEN ? ELSE token END,"
                        + " stamps = stamps + 1 WHERE name = ?";
        this.claim =
                "UPDATE "
                        + name
                        + " SET token = CASE WHEN token < ? THEN ? ELSE token END"
                        + " WHERE name = ?";
        this.read = "SELECT token FROM " + name + " WHERE name = ?";
        this.insert = "INSERT INTO " + name + " (name, token, stamps) VALUES (?, ?, ?)";
    }

    /** Returns the table name. */
    public String name() {
        return name;
    }

    /** Returns the fenced data source. */
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * Returns the data source that transaction managers bind connections for: the fenced data
     * source, or the target of a {@link TransactionAwareDataSourceProxy}.
     */
    public DataSource transactionalDataSource() {
        return target;
    }

    /**
     * Stamps {@code token} into the election's row on the current transaction's connection, and
     * keeps the row locked until that transaction ends. Creates the row if it is missing (then a
     * concurrent first stamp of the same election fails with a duplicate key; {@link #addRow}
     * avoids that).
     *
     * @param electionName the election name
     * @param token the token of the transaction's term
     * @throws FencedOutException if the row holds a newer token
     */
    public void stamp(String electionName, long token) {
        int rows = jdbc.update(stamp, token, token, electionName);
        if (rows == 0) {
            jdbc.update(insert, electionName, token, 1L);
            return;
        }
        List<Long> current = jdbc.queryForList(read, Long.class, electionName);
        long held = current.isEmpty() ? token : current.get(0);
        if (held != token) {
            throw new FencedOutException(electionName, name, token, held);
        }
    }

    /**
     * Raises the election's row to {@code token} in a transaction of its own and commits it, so
     * that from then on every fenced transaction of an older term is refused, unless it stamped
     * before; a row that holds a newer token is left alone. Waits for the row's lock at most {@code
     * timeout} (rounded up to whole seconds, the JDBC query timeout).
     *
     * @param electionName the election name
     * @param token the token of a newly elected term
     * @param timeout how long each statement may wait, for the row's lock above all
     * @return the token the row holds afterwards: {@code token} or a newer one
     * @throws DataAccessException if the database cannot be reached or the wait timed out
     */
    public long claim(String electionName, long token, Duration timeout) {
        int seconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, ceilSeconds(timeout)));
        return inOwnTransaction(
                "claim",
                connection -> {
                    int rows;
                    try (PreparedStatement update = connection.prepareStatement(claim)) {
                        update.setQueryTimeout(seconds);
                        update.setLong(1, token);
                        update.setLong(2, token);
                        update.setString(3, electionName);
                        rows = update.executeUpdate();
                    }
                    if (rows == 0) {
                        insertRow(connection, electionName, token, seconds);
                        return token;
                    }
                    Long held = readToken(connection, electionName, seconds);
                    return held == null ? token : held;
                });
    }

    /**
     * Returns the token in the election's row, as the calling thread's connection sees it.
     *
     * @param electionName the election name
     * @return the token, or empty when the election has no row
     */
    public OptionalLong token(String electionName) {
        List<Long> current = jdbc.queryForList(read, Long.class, electionName);
        return current.isEmpty() ? OptionalLong.empty() : OptionalLong.of(current.get(0));
    }

    /**
     * Adds the election's row with token 0 unless it exists, in a transaction of its own. Run at
     * startup, so that the first fenced transactions of an election only update the row.
     *
     * @param electionName the election name
     * @throws IllegalStateException if the table matches names regardless of case, so that
     *     elections whose names differ only in case would share a row
     */
    public void addRow(String electionName) {
        String what = "add the row of election '" + electionName + "' to";
        String found = inOwnTransaction(what, connection -> readName(connection, electionName));
        if (found == null) {
            try {
                inOwnTransaction(
                        what,
                        connection -> {
                            insertRow(connection, electionName, 0L, 0);
                            return null;
                        });
            } catch (DuplicateKeyException ex) {
                // another instance added it meanwhile (or one whose name differs only in case)
            }
            found = inOwnTransaction(what, connection -> readName(connection, electionName));
        }
        if (found != null && !found.equals(electionName)) {
            throw new IllegalStateException(
                    "redlease: the fence table "
                            + name
                            + " finds the row '"
                            + found
                            + "' for election '"
                            + electionName
                            + "': its name column compares without case, so elections whose"
                            + " names differ only in case would share a row. Make the column"
                            + " case-sensitive (the shipped scripts use a binary collation on"
                            + " MySQL, MariaDB and SQL Server) or rename the election");
        }
    }

    private void insertRow(Connection connection, String electionName, long token, int timeout)
            throws SQLException {
        try (PreparedStatement insertRow = connection.prepareStatement(insert)) {
            if (timeout > 0) {
                insertRow.setQueryTimeout(timeout);
            }
            insertRow.setString(1, electionName);
            insertRow.setLong(2, token);
            insertRow.setLong(3, 0L);
            insertRow.executeUpdate();
        }
    }

    private @Nullable Long readToken(Connection connection, String electionName, int timeout)
            throws SQLException {
        try (PreparedStatement query = connection.prepareStatement(read)) {
            query.setQueryTimeout(timeout);
            query.setString(1, electionName);
            try (ResultSet rs = query.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    private @Nullable String readName(Connection connection, String electionName)
            throws SQLException {
        try (PreparedStatement query =
                connection.prepareStatement("SELECT name FROM " + name + " WHERE name = ?")) {
            query.setString(1, electionName);
            try (ResultSet rs = query.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Work on a connection of its own, in a transaction of its own. */
    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * Runs work on a new connection of the target data source (never one bound to the thread) in a
     * transaction of its own, commits it, and restores the connection's auto-commit setting.
     */
    private <T> T inOwnTransaction(String what, Work<T> work) {
        try (Connection connection = target.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            if (autoCommit) {
                connection.setAutoCommit(false);
            }
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException ex) {
                try {
                    connection.rollback();
                } catch (SQLException rollback) {
                    ex.addSuppressed(rollback);
                }
                throw ex;
            } finally {
                if (autoCommit) {
                    connection.setAutoCommit(true);
                }
            }
        } catch (SQLException ex) {
            DataAccessException translated =
                    jdbc.getExceptionTranslator()
                            .translate("redlease: " + what + " " + name, null, ex);
            throw translated != null
                    ? translated
                    : new UncategorizedSQLException("redlease: " + what + " " + name, null, ex);
        }
    }

    private static long ceilSeconds(Duration timeout) {
        long seconds = timeout.getSeconds();
        return timeout.getNano() > 0 ? seconds + 1 : seconds;
    }

    @Override
    public String toString() {
        return "FenceTable[" + name + "]";
    }
}
