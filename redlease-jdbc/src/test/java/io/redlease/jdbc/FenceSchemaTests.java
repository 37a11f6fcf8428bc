package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Every shipped schema script runs, and the stamp's SQL works on the table it creates: on the real
 * PostgreSQL and MariaDB, and on H2 in the compatibility mode of each database (SQL Server and
 * Oracle are not on this machine).
 */
class FenceSchemaTests {

    @ParameterizedTest
    @CsvSource({
        "postgresql, PostgreSQL;DATABASE_TO_LOWER=TRUE",
        "mysql, MySQL",
        "mysql, MariaDB",
        "h2, REGULAR",
        "sqlserver, MSSQLServer",
        "oracle, Oracle"
    })
    void shippedScriptRunsInH2CompatibilityModeAndTheStampWorksOnIt(String platform, String mode) {
        DataSource dataSource =
                new SimpleDriverDataSource(
                        new org.h2.Driver(),
                        "jdbc:h2:mem:schema-"
                                + UUID.randomUUID()
                                + ";DB_CLOSE_DELAY=-1;MODE="
                                + mode,
                        "sa",
                        "");
        exerciseScript(dataSource, platform);
    }

    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void shippedScriptRunsOnTheRealDatabaseWhosePlatformIsDetected(Database database) {
        DataSource dataSource = database.dataSource();
        exerciseScript(dataSource, null);
    }

    private static void exerciseScript(DataSource dataSource, String platform) {
        FenceTable table = new FenceTable(dataSource, Database.uniqueName("rl_schema"));
        FenceSchema schema = new FenceSchema(table, platform);
        try {
            assertThat(schema.exists()).isFalse();
            schema.create();
            assertThat(schema.exists()).isTrue();
            schema.create(); // idempotent
            schema.verify();
            table.addRow("election");
            table.addRow("election");
            TransactionTemplate tx =
                    new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            tx.executeWithoutResult(status -> table.stamp("election", 7));
            tx.executeWithoutResult(status -> table.stamp("election", 7));
            assertThatExceptionOfType(FencedOutException.class)
                    .isThrownBy(() -> tx.executeWithoutResult(status -> table.stamp("election", 6)))
                    .withMessageContaining("token is 6")
                    .withMessageContaining("newer token 7");
            tx.executeWithoutResult(status -> table.stamp("other", 3));
            assertThat(table.token("election")).hasValue(7);
            assertThat(table.token("other")).hasValue(3);
            assertThat(
                            new JdbcTemplate(dataSource)
                                    .queryForObject(
                                            "SELECT stamps FROM "
                                                    + table.name()
                                                    + " WHERE name = ?",
                                            Long.class,
                                            "election"))
                    .isEqualTo(2);
        } finally {
            new JdbcTemplate(dataSource).execute("DROP TABLE " + table.name());
        }
    }

    @Test
    void scriptNamesTheConfiguredTable() {
        assertThat(FenceSchema.script("postgresql", "jobs.fence"))
                .contains("CREATE TABLE jobs.fence (")
                .doesNotContain("redlease_fence");
        assertThat(FenceSchema.scriptLocation("oracle"))
                .isEqualTo("classpath:io/redlease/jdbc/schema-oracle.sql");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> FenceSchema.scriptLocation("db2"))
                .withMessageContaining("no fence table script for platform 'db2'");
    }

    @Test
    void verifyNamesTheMissingTableAndItsScript() {
        DataSource dataSource = Database.H2.dataSource();
        FenceSchema schema = new FenceSchema(new FenceTable(dataSource, "missing_fence"));
        assertThat(schema.platform()).isEqualTo("h2");
        assertThatExceptionOfType(MissingFenceTableException.class)
                .isThrownBy(schema::verify)
                .withMessageContaining("'missing_fence' does not exist")
                .withMessageContaining("classpath:io/redlease/jdbc/schema-h2.sql")
                .satisfies(
                        ex -> {
                            assertThat(ex.table()).isEqualTo("missing_fence");
                            assertThat(ex.script())
                                    .isEqualTo("classpath:io/redlease/jdbc/schema-h2.sql");
                        });
    }

    @Test
    void tableNameMustBeAPlainIdentifier() {
        DataSource dataSource = Database.H2.dataSource();
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new FenceTable(dataSource, "fence; DROP TABLE x"))
                .withMessageContaining("fence table name must be a plain SQL identifier")
                .withMessageContaining("'fence; DROP TABLE x'");
        assertThat(new FenceTable(dataSource, "jobs.redlease_fence").name())
                .isEqualTo("jobs.redlease_fence");
    }

    @Test
    void aDollarSignInTheTableNameIsKeptInTheScript() {
        assertThat(FenceSchema.script("h2", "rl_fence$1")).contains("CREATE TABLE rl_fence$1 (");
        DataSource dataSource = Database.H2.dataSource();
        FenceSchema schema = new FenceSchema(new FenceTable(dataSource, "rl_fence$2"), "h2");
        schema.create();
        assertThat(schema.exists()).isTrue();
    }

    @Test
    void anUnsupportedDatabaseWhoseTableExistsNeedsNoPlatform() {
        DataSource h2 = Database.H2.dataSource();
        FenceTable onH2 = new FenceTable(h2, Database.uniqueName("rl_unsupported"));
        new FenceSchema(onH2, "h2").create();
        DataSource derby = Databases.reportingProduct(h2, "Apache Derby");
        FenceSchema schema = new FenceSchema(new FenceTable(derby, onH2.name()));
        schema.verify();
        assertThat(schema.exists()).isTrue();
        assertThatExceptionOfType(IllegalStateException.class)
                .isThrownBy(schema::platform)
                .withMessageContaining("no fence table script for the database 'Apache Derby'");
    }

    /**
     * Two instances start together with {@code initialize-schema=always}: the other one's {@code
     * CREATE TABLE} is in flight (not yet committed: PostgreSQL's DDL is transactional) when this
     * one finds no table and runs its own, which waits for the other's and then fails as a
     * duplicate. Creation must still succeed.
     */
    @Test
    void creatingTheTableConcurrentlyWithAnotherInstanceSucceeds() throws Exception {
        DataSource dataSource = Database.POSTGRESQL.dataSource();
        String name = Database.uniqueName("rl_concurrent");
        FenceTable table = new FenceTable(dataSource, name);
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        try (java.sql.Connection other = dataSource.getConnection()) {
            other.setAutoCommit(false);
            try (java.sql.Statement ddl = other.createStatement()) {
                ddl.execute(FenceSchema.script("postgresql", name).replaceAll("(?m)^--.*$", ""));
            }
            java.util.concurrent.CompletableFuture<Void> mine =
                    java.util.concurrent.CompletableFuture.runAsync(
                            () -> new FenceSchema(table).create());
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(20))
                    .until(
                            () ->
                                    jdbc.queryForObject(
                                                    "SELECT count(*) FROM pg_stat_activity"
                                                            + " WHERE wait_event_type = 'Lock'"
                                                            + " AND query LIKE ?",
                                                    Integer.class,
                                                    "CREATE TABLE " + name + "%")
                                            == 1);
            other.commit();
            mine.get(20, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(new FenceSchema(table).exists()).isTrue();
        } finally {
            jdbc.execute("DROP TABLE IF EXISTS " + name);
        }
    }
}
