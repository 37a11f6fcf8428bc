package io.redlease.boot.autoconfigure.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlease.boot.autoconfigure.LeaderOnlyAutoConfiguration;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.autoconfigure.metrics.RedleaseMetricsAutoConfiguration;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.jdbc.FenceTable;
import io.redlease.jdbc.Fenced;
import io.redlease.jdbc.FencedAnnotationBeanPostProcessor;
import io.redlease.jdbc.MissingFenceTableException;
import io.redlease.jdbc.TransactionFencing;
import io.redlease.jdbc.UnfencedTransactionException;
import io.redlease.test.PostgresServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/** Wiring of fenced JDBC transactions, on embedded H2 and the real PostgreSQL, with real Redis. */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class RedleaseJdbcAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    private String name;

    private String redisUrl;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        redisUrl = server.url();
        name =
                "redlease-jdbc-boot:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderOnlyAutoConfiguration.class,
                                        RedleaseMetricsAutoConfiguration.class,
                                        DataSourceAutoConfiguration.class,
                                        DataSourceTransactionManagerAutoConfiguration.class,
                                        JdbcTemplateAutoConfiguration.class,
                                        TransactionAutoConfiguration.class,
                                        RedleaseJdbcAutoConfiguration.class,
                                        FencedAnnotationAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.ttl=1s",
                                "spring.datasource.url=jdbc:h2:mem:"
                                        + System.nanoTime()
                                        + ";DB_CLOSE_DELAY=-1");
    }

    @Test
    void onAnEmbeddedDatabaseTheTableIsCreatedWithARowPerElection() {
        // Not started: a lone instance leads once started, and its term claims the row.
        contextRunner
                .withPropertyValues(
                        "redlease.elections.audit.name=" + name + "-audit",
                        "redlease.auto-startup=false")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).hasSingleBean(TransactionFencing.class);
                            assertThat(context)
                                    .hasSingleBean(FencedAnnotationBeanPostProcessor.class);
                            FenceTable table = context.getBean(FenceTable.class);
                            assertThat(table.name()).isEqualTo("redlease_fence");
                            assertThat(table.token(name)).hasValue(0);
                            assertThat(table.token(name + "-audit")).hasValue(0);
                        });
    }

    @Test
    void theTableNameIsConfigurable() {
        // Not started: a lone instance leads once started, and its term claims the row.
        contextRunner
                .withPropertyValues(
                        "redlease.jdbc.table-name=jobs_fence", "redlease.auto-startup=false")
                .run(
                        context -> {
                            assertThat(context.getBean(FenceTable.class).name())
                                    .isEqualTo("jobs_fence");
                            assertThat(
                                            context.getBean(JdbcTemplate.class)
                                                    .queryForObject(
                                                            "SELECT token FROM jobs_fence WHERE name = ?",
                                                            Long.class,
                                                            name))
                                    .isZero();
                        });
    }

    @Test
    void aMissingTableWithInitializeSchemaNeverFailsStartupNamingTheTableAndScript() {
        contextRunner
                .withPropertyValues("redlease.jdbc.initialize-schema=never")
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            MissingFenceTableException missing =
                                    findCause(
                                            context.getStartupFailure(),
                                            MissingFenceTableException.class);
                            assertThat(missing)
                                    .hasMessageContaining("'redlease_fence' does not exist")
                                    .hasMessageContaining(
                                            "classpath:io/redlease/jdbc/schema-h2.sql");
                            FailureAnalysis analysis =
                                    new MissingFenceTableFailureAnalyzer()
                                            .analyze(context.getStartupFailure());
                            assertThat(analysis.getDescription())
                                    .contains("'redlease_fence' does not exist");
                            assertThat(analysis.getAction())
                                    .contains("classpath:io/redlease/jdbc/schema-h2.sql")
                                    .contains("redlease.jdbc.initialize-schema=always");
                        });
    }

    @Test
    void onPostgresTheDefaultEmbeddedModeDoesNotCreateTheTableButAlwaysDoes() {
        String table = "rl_boot_fence_" + Long.toHexString(System.nanoTime());
        PostgresServer server = PostgresServer.shared();
        ApplicationContextRunner postgres =
                contextRunner.withPropertyValues(
                        "spring.datasource.url=" + server.jdbcUrl(),
                        "spring.datasource.username=" + server.username(),
                        "spring.datasource.password=" + server.password(),
                        "redlease.jdbc.table-name=" + table);
        postgres.run(
                context -> {
                    assertThat(context).hasFailed();
                    assertThat(
                                    findCause(
                                            context.getStartupFailure(),
                                            MissingFenceTableException.class))
                            .hasMessageContaining("'" + table + "' does not exist")
                            .hasMessageContaining(
                                    "classpath:io/redlease/jdbc/schema-postgresql.sql");
                });
        try {
            // Not started: a lone instance leads once started, and its term claims the row.
            postgres.withPropertyValues(
                            "redlease.jdbc.initialize-schema=always", "redlease.auto-startup=false")
                    .run(
                            context -> {
                                assertThat(context).hasNotFailed();
                                assertThat(context.getBean(FenceTable.class).token(name))
                                        .hasValue(0);
                            });
        } finally {
            postgres.withPropertyValues("redlease.jdbc.initialize-schema=always")
                    .run(
                            context ->
                                    context.getBean(JdbcTemplate.class)
                                            .execute("DROP TABLE IF EXISTS " + table));
        }
    }

    @Test
    void anInvalidTableNameFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues("redlease.jdbc.table-name=fence;drop")
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(
                                            findCause(
                                                    context.getStartupFailure(),
                                                    InvalidConfigurationPropertyValueException
                                                            .class))
                                    .hasMessageContaining("redlease.jdbc.table-name")
                                    .hasMessageContaining("plain SQL identifier");
                        });
    }

    @Test
    void fenceAllTransactionsWithAnUnknownElectionFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues(
                        "redlease.jdbc.fence-all-transactions=true", "redlease.jdbc.election=nope")
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(
                                            findCause(
                                                    context.getStartupFailure(),
                                                    InvalidConfigurationPropertyValueException
                                                            .class))
                                    .hasMessageContaining("redlease.jdbc.election")
                                    .hasMessageContaining("nope");
                        });
    }

    @Test
    void fenceAllTransactionsFencesTransactionsInATermAndRefusesOthersBeforeTheyRun() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            TransactionTemplate tx = context.getBean(TransactionTemplate.class);
                            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                            jdbc.execute("CREATE TABLE work (id VARCHAR(20) PRIMARY KEY)");
                            Elector elector = context.getBean(Elector.class);
                            await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
                            Term term = elector.term().orElseThrow();
                            term.execute(
                                    () ->
                                            tx.execute(
                                                    status ->
                                                            jdbc.update(
                                                                    "INSERT INTO work VALUES ('in-term')")),
                                    false);
                            assertThat(context.getBean(FenceTable.class).token(name))
                                    .hasValue(term.token());
                            // without a term (the elector stopped): refused before the work runs
                            elector.stop();
                            assertThatExceptionOfType(UnfencedTransactionException.class)
                                    .isThrownBy(
                                            () ->
                                                    tx.execute(
                                                            status ->
                                                                    jdbc.update(
                                                                            "INSERT INTO work VALUES ('outside')")));
                            assertThat(jdbc.queryForList("SELECT id FROM work", String.class))
                                    .containsExactly("in-term");
                        });
    }

    @Test
    void onAFollowerLeaderOnlySkipsFencedWorkBeforeAnyTransactionBegins() {
        contextRunner
                .withPropertyValues("redlease.auto-startup=false")
                .withConfiguration(AutoConfigurations.of(LeaderOnlyAutoConfiguration.class))
                .withBean(Jobs.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            Jobs jobs = context.getBean(Jobs.class);
                            jobs.fenced();
                            jobs.transactional();
                            assertThat(jobs.runs).isZero();
                        });
        contextRunner
                .withPropertyValues(
                        "redlease.auto-startup=false", "redlease.jdbc.fence-all-transactions=true")
                .withConfiguration(AutoConfigurations.of(LeaderOnlyAutoConfiguration.class))
                .withBean(Jobs.class)
                .run(
                        context -> {
                            // @LeaderOnly is the outer advice: a follower skips before
                            // @Transactional begins, so fence-all-transactions has nothing to
                            // refuse
                            Jobs jobs = context.getBean(Jobs.class);
                            jobs.transactional();
                            jobs.fenced();
                            assertThat(jobs.runs).isZero();
                        });
    }

    /** Leader work annotated both ways. */
    public static class Jobs {

        int runs;

        @LeaderOnly
        @Transactional
        @Fenced
        public void fenced() {
            runs++;
        }

        @LeaderOnly
        @Transactional
        public void transactional() {
            runs++;
        }
    }

    @Test
    void jdbcFencedWritesAreCountedWithTheStoreTag() {
        contextRunner
                .withBean(SimpleMeterRegistry.class)
                .run(
                        context -> {
                            SimpleMeterRegistry registry =
                                    context.getBean(SimpleMeterRegistry.class);
                            context.getBean(RedleaseMetrics.class).bindTo(registry);
                            Elector elector = context.getBean(Elector.class);
                            await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
                            assertThat(count(registry, "jdbc", "applied")).isZero();
                            TransactionTemplate tx = context.getBean(TransactionTemplate.class);
                            TransactionFencing fencing = context.getBean(TransactionFencing.class);
                            elector.term()
                                    .orElseThrow()
                                    .execute(
                                            () ->
                                                    tx.execute(
                                                            status -> {
                                                                fencing.fence();
                                                                return null;
                                                            }),
                                            false);
                            assertThat(count(registry, "jdbc", "applied")).isEqualTo(1.0);
                            assertThat(count(registry, "jdbc", "rejected")).isZero();
                            assertThat(count(registry, "redis", "applied")).isZero();
                        });
    }

    @Test
    void withoutADataSourceOrRedleaseJdbcThereIsNoFencing() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                DataRedisAutoConfiguration.class,
                                RedleaseAutoConfiguration.class,
                                RedleaseJdbcAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=" + redisUrl, "redlease.name=" + name)
                .run(context -> assertThat(context).doesNotHaveBean(TransactionFencing.class));
        contextRunner
                .withClassLoader(new FilteredClassLoader(TransactionFencing.class))
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(FenceTable.class);
                            assertThat(context).hasSingleBean(DataSource.class);
                        });
    }

    @Test
    void theFenceTableIsCheckedAfterTheApplicationsSqlScriptsRan() {
        contextRunner
                .withConfiguration(
                        AutoConfigurations.of(DataSourceInitializationAutoConfiguration.class))
                .withPropertyValues(
                        "redlease.jdbc.initialize-schema=never",
                        "redlease.jdbc.fence-all-transactions=true",
                        "spring.sql.init.mode=always",
                        "spring.sql.init.schema-locations=classpath:io/redlease/jdbc/schema-h2.sql",
                        // Not started: a lone instance leads once started, and claims the row.
                        "redlease.auto-startup=false")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context.getBean(FenceTable.class).token(name)).hasValue(0);
                        });
    }

    @Test
    void fenceAllTransactionsThroughATransactionAwareDataSourceProxyStillFencesThem() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .withBean(
                        DataSource.class,
                        () ->
                                new TransactionAwareDataSourceProxy(
                                        new SimpleDriverDataSource(
                                                new org.h2.Driver(),
                                                "jdbc:h2:mem:"
                                                        + System.nanoTime()
                                                        + ";DB_CLOSE_DELAY=-1")))
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            TransactionTemplate tx = context.getBean(TransactionTemplate.class);
                            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
                            jdbc.execute("CREATE TABLE work (id VARCHAR(20) PRIMARY KEY)");
                            assertThatExceptionOfType(UnfencedTransactionException.class)
                                    .isThrownBy(
                                            () ->
                                                    tx.execute(
                                                            status ->
                                                                    jdbc.update(
                                                                            "INSERT INTO work VALUES ('outside')")));
                            assertThat(jdbc.queryForList("SELECT id FROM work", String.class))
                                    .isEmpty();
                        });
    }

    @Test
    void fenceAllTransactionsWithATransactionManagerOfUnknownResourceFailsStartupNamingIt() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .withBean("otherTransactionManager", OtherTransactionManager.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasMessageContaining("otherTransactionManager")
                                    .hasMessageContaining("fence-all-transactions");
                        });
    }

    @Test
    void aNewlyElectedTermClaimsTheFenceRowBeforeAnyTransaction() {
        contextRunner
                .withBean(SimpleMeterRegistry.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            SimpleMeterRegistry registry =
                                    context.getBean(SimpleMeterRegistry.class);
                            context.getBean(RedleaseMetrics.class).bindTo(registry);
                            Elector elector = context.getBean(Elector.class);
                            await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
                            long token = elector.token().orElseThrow();
                            FenceTable table = context.getBean(FenceTable.class);
                            // no transaction ran: the election claimed the row (or a later
                            // term of this instance did, when the term ended meanwhile)
                            await().atMost(Duration.ofSeconds(10))
                                    .until(() -> table.token(name).orElse(0) >= token);
                            await().atMost(Duration.ofSeconds(10))
                                    .until(() -> claims(registry, "claimed") >= 1.0);
                            assertThat(claims(registry, "failed")).isZero();
                        });
    }

    @Test
    void aFencedMethodOnASecondTransactionManagerOfTheFencedDataSourceIsStamped() {
        contextRunner
                .withUserConfiguration(TwoTransactionManagers.class)
                .withBean(SecondJobs.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            Elector elector = context.getBean(Elector.class);
                            await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
                            Term term = elector.term().orElseThrow();
                            term.execute(
                                    () -> {
                                        context.getBean(SecondJobs.class).settle();
                                        return null;
                                    },
                                    false);
                            assertThat(
                                            context.getBean(JdbcTemplate.class)
                                                    .queryForObject(
                                                            "SELECT stamps FROM redlease_fence"
                                                                    + " WHERE name = ?",
                                                            Long.class,
                                                            name))
                                    .isEqualTo(1);
                        });
    }

    /** Two transaction managers on the one DataSource. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class TwoTransactionManagers {

        @org.springframework.context.annotation.Bean
        org.springframework.jdbc.datasource.DataSourceTransactionManager transactionManager(
                DataSource dataSource) {
            return new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource);
        }

        @org.springframework.context.annotation.Bean
        org.springframework.jdbc.datasource.DataSourceTransactionManager secondTransactionManager(
                DataSource dataSource) {
            return new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource);
        }
    }

    /** A fenced method on the second transaction manager. */
    public static class SecondJobs {

        @Transactional("secondTransactionManager")
        @Fenced
        public void settle() {}
    }

    @Test
    void fenceAllTransactionsWithAPlatformTransactionManagerThatTakesNoListenersFailsStartup() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .withBean(
                        "plainTransactionManager",
                        org.springframework.transaction.PlatformTransactionManager.class,
                        PlainTransactionManager::new)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasMessageContaining("plainTransactionManager")
                                    .hasMessageContaining("fence-all-transactions");
                        });
    }

    /** A transaction manager that is not an AbstractPlatformTransactionManager. */
    static class PlainTransactionManager
            implements org.springframework.transaction.PlatformTransactionManager {

        @Override
        public org.springframework.transaction.TransactionStatus getTransaction(
                org.springframework.transaction.@org.jspecify.annotations.Nullable
                        TransactionDefinition
                        definition) {
            return new org.springframework.transaction.support.SimpleTransactionStatus();
        }

        @Override
        public void commit(org.springframework.transaction.TransactionStatus status) {}

        @Override
        public void rollback(org.springframework.transaction.TransactionStatus status) {}
    }

    @Test
    void anElectorBeanOfTheApplicationThatCannotClaimIsNamedInAWarning(CapturedOutput output) {
        contextRunner
                .withUserConfiguration(OwnElector.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(output)
                                    .contains(
                                            "the elector of election '"
                                                    + name
                                                    + "' does not claim the fence row");
                        });
    }

    /** The application's own elector for the main election. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnElector {

        @org.springframework.context.annotation.Bean
        Elector elector(
                org.springframework.data.redis.connection.RedisConnectionFactory factory,
                org.springframework.core.env.Environment environment) {
            return new Elector(
                    factory,
                    io.redlease.core.ElectorConfig.builder(
                                    environment.getRequiredProperty("redlease.name"))
                            .build());
        }
    }

    /** A transaction manager whose transactions hold no connection redlease can see. */
    public static class OtherTransactionManager
            extends org.springframework.transaction.support.AbstractPlatformTransactionManager {

        private static final long serialVersionUID = 1L;

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(
                Object transaction, org.springframework.transaction.TransactionDefinition def) {}

        @Override
        protected void doCommit(
                org.springframework.transaction.support.DefaultTransactionStatus status) {}

        @Override
        protected void doRollback(
                org.springframework.transaction.support.DefaultTransactionStatus status) {}
    }

    private static double claims(SimpleMeterRegistry registry, String result) {
        return registry.get(RedleaseMetrics.FENCE_CLAIMS)
                .tag(RedleaseMetrics.TAG_RESULT, result)
                .functionCounter()
                .count();
    }

    private static double count(SimpleMeterRegistry registry, String store, String result) {
        return registry.get(RedleaseMetrics.FENCE_WRITES)
                .tag(RedleaseMetrics.TAG_STORE, store)
                .tag(RedleaseMetrics.TAG_RESULT, result)
                .functionCounter()
                .count();
    }

    private static <T extends Throwable> T findCause(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " in " + failure, failure);
    }
}
