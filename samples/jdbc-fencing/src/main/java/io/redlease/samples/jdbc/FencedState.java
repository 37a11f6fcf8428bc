package io.redlease.samples.jdbc;

import java.util.Optional;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The hand-written pattern for a store without a Spring transaction (or to fence single rows): a
 * table of values, each with the fencing token of the last write, where a write applies only if its
 * token is at least the row's. {@link Settlements} shows the usual way, {@code @Fenced}.
 *
 * <pre>
 * CREATE TABLE fenced_state (id text PRIMARY KEY, value text NOT NULL, fence bigint NOT NULL)
 * </pre>
 */
@Repository
public class FencedState {

    private final JdbcTemplate jdbc;

    private final String table;

    public FencedState(JdbcTemplate jdbc, @Value("${sample.table:fenced_state}") String table) {
        if (!table.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException(
                    "sample.table must be a plain lowercase SQL name: " + table);
        }
        this.jdbc = jdbc;
        this.table = table;
        jdbc.execute(
                "CREATE TABLE IF NOT EXISTS "
                        + table
                        + " (id text PRIMARY KEY, value text NOT NULL, fence bigint NOT NULL)");
    }

    /**
     * Writes {@code value} under {@code token}, also the first time (an upsert with the same
     * condition).
     *
     * @return true if written; false if the row carries a newer token: this writer is stale
     */
    public boolean write(String id, String value, long token) {
        int rows =
                jdbc.update(
                        "INSERT INTO "
                                + table
                                + " AS t (id, value, fence) VALUES (?, ?, ?)"
                                + " ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value, fence = EXCLUDED.fence"
                                + " WHERE t.fence <= EXCLUDED.fence",
                        id,
                        value,
                        token);
        return rows == 1;
    }

    /**
     * Updates an existing row under {@code token}, the Go library's documented form: {@code UPDATE
     * ... WHERE id = ? AND fence <= ?}; zero rows means stale (or no such row).
     */
    public boolean update(String id, String value, long token) {
        return jdbc.update(
                        "UPDATE " + table + " SET value = ?, fence = ? WHERE id = ? AND fence <= ?",
                        value,
                        token,
                        id,
                        token)
                == 1;
    }

    /** Returns the row's value and token. */
    public Optional<Row> read(String id) {
        return jdbc
                .query(
                        "SELECT value, fence FROM " + table + " WHERE id = ?",
                        (rs, n) -> new Row(rs.getString("value"), rs.getLong("fence")),
                        id)
                .stream()
                .findFirst();
    }

    /** A row: its value and the token that wrote it. */
    public record Row(String value, long fence) {}
}
