package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * {@link FenceClaims} on the real databases: a newly elected term's claim raises the row, waits for
 * the row's lock at most its timeout, is retried and reported while it fails, and stops when the
 * term ends. The election's observer is called directly, as the election's lane would.
 */
class FenceClaimsTests {

    @ParameterizedTest
    @EnumSource(Database.class)
    void aClaimWaitingForTheRowsLockTimesOutIsReportedAndRetriedUntilItHolds(Database database)
            throws Exception {
        DataSource dataSource = database.dataSource();
        FenceTable table = new FenceTable(dataSource, Database.uniqueName("rl_claim"));
        new FenceSchema(table, database.platform).create();
        List<String> outcomes = new CopyOnWriteArrayList<>();
        try (FenceClaims claims =
                new FenceClaims(List.of(table), Duration.ofSeconds(1), recorder(outcomes))) {
            table.addRow("claimed");
            try (Connection holder = dataSource.getConnection()) {
                // an older term's transaction between its stamp and its commit
                holder.setAutoCommit(false);
                try (PreparedStatement lock =
                        holder.prepareStatement(
                                "UPDATE "
                                        + table.name()
                                        + " SET stamps = stamps + 1 WHERE name = ?")) {
                    lock.setString(1, "claimed");
                    lock.executeUpdate();
                }
                claims.observer("claimed").onElected(5);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> outcomes.contains("failed claimed 5"));
                assertThat(outcomes).doesNotContain("claimed claimed 5");
                holder.commit();
            }
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> outcomes.contains("claimed claimed 5"));
            assertThat(table.token("claimed")).hasValue(5);
            assertThat(stamps(dataSource, table, "claimed")).isEqualTo(1);
        } finally {
            new JdbcTemplate(dataSource).execute("DROP TABLE " + table.name());
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void whileTheDatabaseIsUnreachableTheClaimIsRetriedAndANewerTokenIsLeftAlone(
            Database database) {
        DataSource real = database.dataSource();
        AtomicBoolean reachable = new AtomicBoolean(false);
        DataSource flaky =
                new DelegatingDataSource(real) {
                    @Override
                    public Connection getConnection() throws SQLException {
                        if (!reachable.get()) {
                            throw new SQLException("connection refused", "08001");
                        }
                        return super.getConnection();
                    }
                };
        FenceTable setup = new FenceTable(real, Database.uniqueName("rl_unreachable"));
        new FenceSchema(setup, database.platform).create();
        List<String> outcomes = new CopyOnWriteArrayList<>();
        FenceTable table = new FenceTable(flaky, setup.name());
        try (FenceClaims claims =
                new FenceClaims(List.of(table), Duration.ofSeconds(1), recorder(outcomes))) {
            Observer observer = claims.observer("unreachable");
            observer.onElected(3);
            await().atMost(Duration.ofSeconds(30))
                    .until(
                            () ->
                                    outcomes.stream()
                                                    .filter(o -> o.equals("failed unreachable 3"))
                                                    .count()
                                            >= 2);
            reachable.set(true);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> outcomes.contains("claimed unreachable 3"));
            assertThat(setup.token("unreachable")).hasValue(3);
            // a claim of an older term leaves the newer token
            observer.onSteppedDown(StepDownReason.RESIGNED);
            observer.onElected(2);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> outcomes.contains("claimed unreachable 2"));
            assertThat(setup.token("unreachable")).hasValue(3);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aClaimStopsWhenItsTermEnds(Database database) {
        DataSource real = database.dataSource();
        AtomicBoolean reachable = new AtomicBoolean(false);
        DataSource flaky =
                new DelegatingDataSource(real) {
                    @Override
                    public Connection getConnection() throws SQLException {
                        if (!reachable.get()) {
                            throw new SQLException("connection refused", "08001");
                        }
                        return super.getConnection();
                    }
                };
        FenceTable setup = new FenceTable(real, Database.uniqueName("rl_ended"));
        new FenceSchema(setup, database.platform).create();
        List<String> outcomes = new CopyOnWriteArrayList<>();
        try (FenceClaims claims =
                new FenceClaims(
                        List.of(new FenceTable(flaky, setup.name())),
                        Duration.ofSeconds(1),
                        recorder(outcomes))) {
            Observer observer = claims.observer("ended");
            observer.onElected(4);
            await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.contains("failed ended 4"));
            observer.onSteppedDown(StepDownReason.EXPIRED);
            reachable.set(true);
            observer.onElected(6);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> outcomes.contains("claimed ended 6"));
            assertThat(outcomes).doesNotContain("claimed ended 4");
            assertThat(setup.token("ended")).hasValue(6);
        }
    }

    private static long stamps(DataSource dataSource, FenceTable table, String name) {
        Long stamps =
                new JdbcTemplate(dataSource)
                        .queryForObject(
                                "SELECT stamps FROM " + table.name() + " WHERE name = ?",
                                Long.class,
                                name);
        return stamps == null ? -1 : stamps;
    }

    private static FencedTransactionListener recorder(List<String> outcomes) {
        return new FencedTransactionListener() {
            @Override
            public void onClaimed(String electionName, long token, String table) {
                outcomes.add("claimed " + electionName + " " + token);
            }

            @Override
            public void onClaimFailed(
                    String electionName, long token, String table, Throwable error) {
                outcomes.add("failed " + electionName + " " + token);
            }
        };
    }
}
