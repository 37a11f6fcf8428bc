package io.redlease.jdbc;

import org.springframework.dao.InvalidDataAccessResourceUsageException;

/**
 * Thrown at startup when the fence table does not exist (or lacks its columns) and is not to be
 * created automatically. Names the table and the schema script that creates it.
 */
public class MissingFenceTableException extends InvalidDataAccessResourceUsageException {

    private static final long serialVersionUID = 1L;

    private final String table;

    private final String script;

    /**
     * Creates the exception.
     *
     * @param table the fence table's name
     * @param script the location of the schema script for the database's platform
     * @param cause the error the database gave when the table was read
     */
    public MissingFenceTableException(String table, String script, Throwable cause) {
        super(
                "redlease: the fence table '"
                        + table
                        + "' does not exist or lacks its columns (name, token, stamps); create it"
                        + " with "
                        + script
                        + (table.equals(FenceTable.DEFAULT_NAME)
                                ? ""
                                : " (with the table name changed to " + table + ")"),
                cause);
        this.table = table;
        this.script = script;
    }

    /** Returns the fence table's name. */
    public String table() {
        return table;
    }

    /** Returns the location of the schema script that creates the table. */
    public String script() {
        return script;
    }
}
