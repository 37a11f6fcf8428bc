package io.redlease.boot.autoconfigure.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.boot.autoconfigure.LeaderOnlyAutoConfiguration;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.core.LeadershipContext;
import io.redlease.jdbc.FenceTable;
import io.redlease.jdbc.Fenced;
import io.redlease.jdbc.TransactionFencing;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.LazyConnectionDataSourceProxy;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

/**
 * Hostile probes of the fenced-transaction wiring: Boot configurations where fencing cannot be
 * applied must fail startup, naming the bean or the property and the fix. Embedded H2 databases
 * (the refusals happen before any transaction) and a real Redis.
 */
@ExtendWith(RedisExtension.class)
class FencedHostileApplicationTests {

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
                                        JdbcTemplateAutoConfiguration.class,
                                        TransactionAutoConfiguration.class,
                                        RedleaseJdbcAutoConfiguration.class,
                                        FencedAnnotationAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=fenced-hostile-" + System.nanoTime(),
                                "redlease.ttl=1s");
    }

    @Test
    void twoTransactionFencingBeansFailStartupNamingBothAndHowToChoose() {
        contextRunner
                .withBean(DataSource.class, FencedHostileApplicationTests::h2)
                .withUserConfiguration(TwoFencings.class)
                .withBean(Jobs.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("ordersFencing")
                                    .hasStackTraceContaining("reportsFencing")
                                    .hasStackTraceContaining("@Primary");
                        });
    }

    @Test
    void twoTransactionFencingBeansFailStartupAlsoWithoutFencedMethods() {
        contextRunner
                .withBean(DataSource.class, FencedHostileApplicationTests::h2)
                .withUserConfiguration(TwoFencings.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("ordersFencing, reportsFencing")
                                    .hasStackTraceContaining("@Primary");
                        });
    }

    @Test
    void fenceAllWhereTheJdbcAutoConfigurationBacksOffFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .withBean("orders", DataSource.class, FencedHostileApplicationTests::h2)
                .withBean("reports", DataSource.class, FencedHostileApplicationTests::h2)
                .withBean(
                        PlatformTransactionManager.class,
                        () -> new DataSourceTransactionManager(h2()))
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("redlease.jdbc.fence-all-transactions")
                                    .hasStackTraceContaining(
                                            "2 DataSource beans (orders, reports)");
                        });
    }

    @Test
    void aTransactionManagerCreatedBeforeTheFencingPostProcessorFailsStartupNamingIt() {
        contextRunner
                .withBean(DataSource.class, FencedHostileApplicationTests::h2)
                .withUserConfiguration(EarlyTransactionManager.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("'earlyTransactionManager'")
                                    .hasStackTraceContaining("FencingTransactionListener");
                        });
    }

    @Test
    void aRoutingDataSourceFailsStartupNamingTheFix() {
        contextRunner
                .withBean(DataSource.class, () -> routing(h2(), h2()))
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("AbstractRoutingDataSource")
                                    .hasStackTraceContaining("fence");
                        });
    }

    @Test
    void fenceAllWithATransactionManagerOnAWrapperOfTheFencedDataSourceFailsStartupNamingIt() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .withUserConfiguration(WrappedDataSource.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("'lazyTransactionManager'")
                                    .hasStackTraceContaining("fenced DataSource");
                        });
    }

    @Test
    void fenceAllWithATransactionManagerOnARoutingDataSourceOverTheFencedOneFailsStartup() {
        contextRunner
                .withPropertyValues("redlease.jdbc.fence-all-transactions=true")
                .withUserConfiguration(RoutingOverFenced.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            assertThat(context.getStartupFailure())
                                    .hasStackTraceContaining("'routingTransactionManager'")
                                    .hasStackTraceContaining("AbstractRoutingDataSource");
                        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoFencings {

        @Bean
        TransactionFencing ordersFencing(FenceTable table, LeadershipContext leadership) {
            return new TransactionFencing(table, leadership);
        }

        @Bean
        TransactionFencing reportsFencing(FenceTable table, LeadershipContext leadership) {
            return new TransactionFencing(table, leadership);
        }
    }

    /** A transaction manager that a post-processor of the application needs, so made early. */
    @Configuration(proxyBeanMethods = false)
    static class EarlyTransactionManager {

        @Bean
        static DataSourceTransactionManager earlyTransactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        static BeanPostProcessor auditing(PlatformTransactionManager earlyTransactionManager) {
            return new BeanPostProcessor() {};
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WrappedDataSource {

        @Bean
        @Primary
        DataSource orders() {
            return h2();
        }

        @Bean
        DataSource lazy(DataSource orders) {
            return new LazyConnectionDataSourceProxy(orders);
        }

        @Bean
        @Primary
        DataSourceTransactionManager transactionManager(DataSource orders) {
            return new DataSourceTransactionManager(orders);
        }

        @Bean
        DataSourceTransactionManager lazyTransactionManager(@Qualifier("lazy") DataSource lazy) {
            return new DataSourceTransactionManager(lazy);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class RoutingOverFenced {

        @Bean
        @Primary
        DataSource orders() {
            return h2();
        }

        @Bean
        DataSource routing(DataSource orders) {
            return FencedHostileApplicationTests.routing(orders, h2());
        }

        @Bean
        @Primary
        DataSourceTransactionManager transactionManager(DataSource orders) {
            return new DataSourceTransactionManager(orders);
        }

        @Bean
        DataSourceTransactionManager routingTransactionManager(
                @Qualifier("routing") DataSource routing) {
            return new DataSourceTransactionManager(routing);
        }
    }

    /** A bean with a fenced method. */
    public static class Jobs {

        @Transactional
        @Fenced
        public void settle() {}
    }

    static DataSource routing(DataSource first, DataSource second) {
        AbstractRoutingDataSource routing =
                new AbstractRoutingDataSource() {
                    @Override
                    protected Object determineCurrentLookupKey() {
                        return "first";
                    }
                };
        routing.setTargetDataSources(Map.of("first", first, "second", second));
        routing.setDefaultTargetDataSource(first);
        routing.afterPropertiesSet();
        return routing;
    }

    static DataSource h2() {
        SimpleDriverDataSource dataSource = new SimpleDriverDataSource();
        dataSource.setDriverClass(org.h2.Driver.class);
        dataSource.setUrl("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        dataSource.setUsername("sa");
        return dataSource;
    }
}
