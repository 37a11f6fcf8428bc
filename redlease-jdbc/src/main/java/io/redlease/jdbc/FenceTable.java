package io.redlease.jdbc;

import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The fence table: one row per election, {@code (name, token, stamps)}, holding the newest token
 * that committed a fenced transaction and how many fenced transactions committed.
 *
 * <p>{@link #stamp} runs on the connection of the transaction in progress (through {@link
 * JdbcTemplate}, so {@code DataSourceUtils} finds the connection the transaction manager bound to
 * the thread). It raises the row's token to the term's token with one conditional update, which
 * takes the row's lock and keeps it until the transaction ends, then reads the row back: a newer
 * token means the transaction is refused. The update always changes the row (it counts {@code
 * stamps}), so the read that follows sees the transaction's own version of the row on every
 * database, MySQL's consistent reads included.
 */
public final class FenceTable {

    /** The default table name. */
    public static final String DEFAULT_NAME = "redlease_fence";

    private static final Pattern NAME =
            Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)?");

    private final DataSource dataSource;

    private final String name;

    private final JdbcTemplate jdbc;

    private final String stamp;

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
     * @param dataSource the fenced data source
     * @param name the table name: a plain SQL identifier, optionally schema-qualified
     * @throws IllegalArgumentException if the name is not such an identifier
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
        this.dataSource = dataSource;
        this.name = name;
        this.jdbc = new JdbcTemplate(dataSource);
        this.stamp =
                "UPDATE "
                        + name
                        + " SET token = CASE WHEN token < ? THEN ? ELSE token END,"
                        + " stamps = stamps + 1 WHERE name = ?";
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
     * Adds the election's row with token 0 unless it exists. Run outside a transaction at startup,
     * so that the first fenced transactions of an election only update the row.
     *
     * @param electionName the election name
     */
    public void addRow(String electionName) {
        if (token(electionName).isPresent()) {
            return;
        }
        try {
            jdbc.update(insert, electionName, 0L, 0L);
        } catch (DuplicateKeyException ex) {
            // another instance added it meanwhile
        }
    }

    @Override
    public String toString() {
        return "FenceTable[" + name + "]";
    }
}
