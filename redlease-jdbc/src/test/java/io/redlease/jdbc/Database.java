package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.fail;

import io.redlease.test.DatabaseServer;
import io.redlease.test.MariaDbServer;
import io.redlease.test.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The databases the tests run against: a real PostgreSQL and a real MariaDB that the tests start
 * themselves on free loopback ports ({@link PostgresServer#shared()}, {@link
 * MariaDbServer#shared()}, or the servers named by {@code REDLEASE_TEST_POSTGRES_URL} and {@code
 * REDLEASE_TEST_MARIADB_URL}), and an embedded H2. A database that cannot be had fails the test
 * with what to install; it never skips.
 */
enum Database {
    POSTGRESQL(
            PostgresServer::shared,
            FenceSchema.POSTGRESQL,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE ?"),
    MARIADB(
            MariaDbServer::shared,
            FenceSchema.MYSQL,
            "SELECT count(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"
                    + " AND trx_query LIKE ?"),
    H2(
            null,
            FenceSchema.H2,
            "SELECT count(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL"
                    + " AND EXECUTING_STATEMENT LIKE ?");

    private static final String H2_URL =
            "jdbc:h2:mem:redlease-%s;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000";

    private final @Nullable Supplier<? extends DatabaseServer> server;

    final String platform;

    private final String lockWaits;

    Database(
            @Nullable Supplier<? extends DatabaseServer> server,
            String platform,
            String lockWaits) {
        this.server = server;
        this.platform = platform;
        this.lockWaits = lockWaits;
    }

    /** Returns the JDBC URL (a new in-memory database each time for H2). */
    String url() {
        return server == null ? String.format(H2_URL, UUID.randomUUID()) : server.get().jdbcUrl();
    }

    /** Returns the user name. */
    String user() {
        return server == null ? "sa" : server.get().username();
    }

    /** Returns the password. */
    String password() {
        return server == null ? "" : server.get().password();
    }

    /** Returns a data source on the database, after checking that it answers. */
    DataSource dataSource() {
        String url = url();
        SimpleDriverDataSource dataSource = new SimpleDriverDataSource();
        try {
            dataSource.setDriver(DriverManager.getDriver(url));
        } catch (SQLException ex) {
            throw new IllegalStateException("no JDBC driver for " + url, ex);
        }
        dataSource.setUrl(url);
        dataSource.setUsername(user());
        dataSource.setPassword(password());
        try (Connection connection = dataSource.getConnection()) {
            connection.isValid(5);
        } catch (SQLException ex) {
            return fail(
                    name()
                            + " is needed for this test but is not reachable at "
                            + url
                            + " as "
                            + user()
                            + " ("
                            + ex.getMessage()
                            + ")");
        }
        return dataSource;
    }

    /** Returns how many sessions wait for a row lock while running an UPDATE of {@code table}. */
    int lockWaits(DataSource dataSource, String table) {
        Integer count =
                new JdbcTemplate(dataSource)
                        .queryForObject(lockWaits, Integer.class, "UPDATE " + table + "%");
        return count == null ? 0 : count;
    }

    /** Returns a table name unique to this run. */
    static String uniqueName(String prefix) {
        return prefix + "_" + Long.toHexString(System.nanoTime());
    }
}
