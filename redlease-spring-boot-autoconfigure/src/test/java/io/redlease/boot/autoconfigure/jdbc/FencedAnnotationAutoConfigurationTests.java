package io.redlease.boot.autoconfigure.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.redlease.boot.autoconfigure.LeaderOnlyAutoConfiguration;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.jdbc.Fenced;
import io.redlease.jdbc.UnfencedTransactionException;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@code @Fenced} never runs unfenced: where redlease's JDBC auto-configuration backs off, a bean
 * with {@code @Fenced} methods fails startup naming the method and why; with redlease disabled its
 * calls are refused.
 */
@ExtendWith(RedisExtension.class)
class FencedAnnotationAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    @BeforeEach
    void setUp(RedisServer server) {
        contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderOnlyAutoConfiguration.class,
                                        DataSourceAutoConfiguration.class,
                                        DataSourceTransactionManagerAutoConfiguration.class,
                                        TransactionAutoConfiguration.class,
                                        RedleaseJdbcAutoConfiguration.class,
                                        FencedAnnotationAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=fenced-boot-" + System.nanoTime(),
                                "redlease.ttl=1s");
    }

    @Test
    void fencedMethodsWithTwoDataSourcesAndNoPrimaryFailStartupNamingTheMethodAndTheFix() {
        contextRunner
                .withBean("orders", DataSource.class, () -> h2())
                .withBean("reports", DataSource.class, () -> h2())
                .withBean(
                        PlatformTransactionManager.class,
                        () -> new DataSourceTransactionManager(h2()))
                .withBean(Jobs.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasMessageContaining("@Fenced on " + Jobs.class.getName())
                                    .hasMessageContaining("settle")
                                    .hasMessageContaining("no TransactionFencing bean")
                                    .hasMessageContaining("2 DataSource beans (orders, reports)")
                                    .hasMessageContaining("@Primary");
                        });
    }

    @Test
    void fencedMethodsWithoutSpringBootJdbcFailStartupNamingTheMissingModule() {
        contextRunner
                .withClassLoader(new FilteredClassLoader(EmbeddedDatabaseConnection.class))
                .withBean(DataSource.class, () -> h2())
                .withBean(Jobs.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasMessageContaining("@Fenced on " + Jobs.class.getName())
                                    .hasMessageContaining("spring-boot-jdbc");
                        });
    }

    @Test
    void withRedleaseDisabledFencedCallsAreRefusedAndNothingRuns() {
        contextRunner
                .withPropertyValues(
                        "redlease.enabled=false",
                        "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID())
                .withBean(Jobs.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            Jobs jobs = context.getBean(Jobs.class);
                            assertThatExceptionOfType(UnfencedTransactionException.class)
                                    .isThrownBy(jobs::settle)
                                    .withMessageContaining("redlease.enabled=false");
                            assertThat(jobs.runs).isZero();
                        });
    }

    private static DataSource h2() {
        return new SimpleDriverDataSource(
                new org.h2.Driver(), "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    /** A bean with a fenced method. */
    public static class Jobs {

        int runs;

        @Transactional
        @Fenced
        public void settle() {
            runs++;
        }
    }
}
