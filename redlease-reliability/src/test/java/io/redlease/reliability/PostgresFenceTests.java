package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.test.PostgresServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * PostgreSQL as the fenced resource: the token goes into a {@code fence} column and every write is
 * conditional on it, an {@code UPDATE ... WHERE fence <= ?} and an upsert whose {@code DO UPDATE}
 * has the same condition. A stale leader's writes change zero rows.
 *
 * <p>Runs against the PostgreSQL the tests start themselves on a free port ({@link
 * PostgresServer#shared()}, or the server named by {@code REDLEASE_TEST_POSTGRES_URL}); the test
 * fails, it does not skip, when there is none.
 */
@ExtendWith(RedisExtension.class)
class PostgresFenceTests {

    private static Connection connect() throws SQLException {
        PostgresServer postgres = PostgresServer.shared();
        return DriverManager.getConnection(
                postgres.jdbcUrl(), postgres.username(), postgres.password());
    }

    @Test
    void staleLeadersConditionalUpdateAndUpsertChangeNoRows(RedisServer server, TestInfo info)
            throws Exception {
        String table = "redlease_rel_" + Long.toHexString(System.nanoTime());
        try (Connection sql = connect();
                Harness harness = new Harness(info, server.host(), server.port())) {
            try (Statement ddl = sql.createStatement()) {
                ddl.execute(
                        "CREATE TABLE "
                                + table
                                + " (id text PRIMARY KEY, value text NOT NULL, fence bigint NOT NULL)");
            }
            try {
                String update =
                        "UPDATE " + table + " SET value = ?, fence = ? WHERE id = ? AND fence <= ?";
                String upsert =
                        "INSERT INTO "
                                + table
                                + " AS t (id, value, fence) VALUES (?, ?, ?)"
                                + " ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value, fence = EXCLUDED.fence"
                                + " WHERE t.fence <= EXCLUDED.fence";
                Elector a = elector(harness, "a");
                Elector b = elector(harness, "b");
                CountDownLatch parked = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                CompletableFuture<int[]> stale = new CompletableFuture<>();
                a.start(
                        term -> {
                            assertThat(upsert(sql, upsert, "report", "a-1", term)).isEqualTo(1);
                            assertThat(upsert(sql, upsert, "report", "a-2", term)).isEqualTo(1);
                            parked.countDown();
                            NetworkFaultTests.awaitUninterruptibly(release);
                            Thread.interrupted();
                            stale.complete(
                                    new int[] {
                                        update(sql, update, "report", "a-stale", term),
                                        upsert(sql, upsert, "report", "a-stale", term)
                                    });
                        });
                Awaitility.await().atMost(scaled(Duration.ofSeconds(5))).until(a::isLeader);
                assertThat(parked.await(5, TimeUnit.SECONDS)).isTrue();
                long tokenA = a.token().orElseThrow();
                CompletableFuture<Long> bToken = new CompletableFuture<>();
                b.start(
                        term -> {
                            assertThat(update(sql, update, "report", "b-1", term)).isEqualTo(1);
                            assertThat(upsert(sql, upsert, "other", "b-1", term)).isEqualTo(1);
                            bToken.complete(term.token());
                            term.awaitEnd();
                        });
                a.resign();
                long tb = bToken.get(10, TimeUnit.SECONDS);
                assertThat(tb).isGreaterThan(tokenA);
                release.countDown();
                int[] rows = stale.get(10, TimeUnit.SECONDS);
                assertThat(rows)
                        .as("rows changed by the stale leader's update and upsert")
                        .containsExactly(0, 0);
                try (PreparedStatement read =
                        sql.prepareStatement(
                                "SELECT value, fence FROM " + table + " WHERE id = ?")) {
                    read.setString(1, "report");
                    try (ResultSet row = read.executeQuery()) {
                        assertThat(row.next()).isTrue();
                        assertThat(row.getString(1)).isEqualTo("b-1");
                        assertThat(row.getLong(2)).isEqualTo(tb);
                    }
                }
                harness.fault(
                        "stale leader writing to PostgreSQL", System.nanoTime(), System.nanoTime());
                Figures.count("PostgreSQL stale writes rejected", 2);
                a.stop();
                b.stop();
            } finally {
                try (Statement ddl = sql.createStatement()) {
                    ddl.execute("DROP TABLE IF EXISTS " + table);
                }
            }
        }
    }

    private static Elector elector(Harness harness, String id) {
        Elector elector =
                new Elector(
                        harness.connections.standalone(harness.host(), harness.port()),
                        harness.config().instanceId(id).build());
        harness.closeLater(elector);
        return elector;
    }

    static int update(Connection sql, String statement, String id, String value, Term term)
            throws SQLException {
        try (PreparedStatement update = sql.prepareStatement(statement)) {
            update.setString(1, value);
            update.setLong(2, term.token());
            update.setString(3, id);
            update.setLong(4, term.token());
            return update.executeUpdate();
        }
    }

    static int upsert(Connection sql, String statement, String id, String value, Term term)
            throws SQLException {
        try (PreparedStatement upsert = sql.prepareStatement(statement)) {
            upsert.setString(1, id);
            upsert.setString(2, value);
            upsert.setLong(3, term.token());
            return upsert.executeUpdate();
        }
    }
}
