package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.fail;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The databases the tests run against: the real PostgreSQL (127.0.0.1:5432, database {@code test}),
 * the real MariaDB (127.0.0.1:3306, root without password, database {@code test}) and an embedded
 * H2. A database that is not reachable fails the test with what to start; it never skips.
 */
enum Database {
    POSTGRESQL(
            "redlease.test.postgres.url",
            "jdbc:postgresql://127.0.0.1:5432/test",
            "postgres",
            FenceSchema.POSTGRESQL,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE ?"),
    MARIADB(
            "redlease.test.mariadb.url",
            "jdbc:mariadb://127.0.0.1:3306/test",
            "root",
            FenceSchema.MYSQL,
            "SELECT count(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'"
                    + " AND trx_query LIKE ?"),
    H2(
            "redlease.test.h2.url",
            "jdbc:h2:mem:redlease-%s;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=20000",
            "sa",
            FenceSchema.H2,
            "SELECT count(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL"
                    + " AND EXECUTING_STATEMENT LIKE ?");

    private final String property;

    private final String defaultUrl;

    private final String user;

    final String platform;

    private final String lockWaits;

    Database(String property, String url, String user, String platform, String lockWaits) {
        this.property = property;
        this.defaultUrl = url;
        this.user = user;
        this.platform = platform;
        this.lockWaits = lockWaits;
    }

    /** Returns the JDBC URL (a new in-memory database each time for H2). */
    String url() {
        String url = System.getProperty(property, defaultUrl);
        return url.contains("%s") ? String.format(url, UUID.randomUUID()) : url;
    }

    /** Returns the user name. */
    String user() {
        return user;
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
        dataSource.setUsername(user);
        dataSource.setPassword("");
        try (Connection connection = dataSource.getConnection()) {
            connection.isValid(5);
        } catch (SQLException ex) {
            return fail(
                    name()
                            + " is needed for this test but is not reachable at "
                            + url
                            + " as "
                            + user
                            + " ("
                            + ex.getMessage()
                            + "). Start it (.ci/run installs and starts PostgreSQL and MariaDB),"
                            + " or point -D"
                            + property
                            + " at one.");
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
