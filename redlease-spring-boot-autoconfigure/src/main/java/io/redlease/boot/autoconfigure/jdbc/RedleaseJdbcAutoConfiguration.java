package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.UnknownElectionException;
import io.redlease.jdbc.FenceClaims;
import io.redlease.jdbc.FenceTable;
import io.redlease.jdbc.FencedTransactionListener;
import io.redlease.jdbc.FencingTransactionListener;
import io.redlease.jdbc.TransactionFencing;
import java.util.Arrays;
import java.util.List;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Auto-configuration of fenced JDBC transactions, when {@code redlease-jdbc} is on the classpath
 * and the application has one {@code DataSource} (or one marked primary): the {@link FenceTable}
 * (created or checked at startup after the application's schema migrations and SQL scripts, with a
 * row per election), {@link TransactionFencing}, a {@link FencingTransactionListener} on every
 * transaction manager of that data source (with {@code redlease.jdbc.fence-all-transactions=true},
 * one that fences all its read-write transactions), and {@link FenceClaims}, through which every
 * elector claims the fence row as soon as it wins a term. {@code @Fenced} is applied by {@link
 * FencedAnnotationAutoConfiguration}, also where this one backs off.
 */
@AutoConfiguration(
        after = RedleaseAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
        })
@ConditionalOnClass({TransactionFencing.class, DataSource.class, EmbeddedDatabaseConnection.class})
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBean(Elections.class)
@EnableConfigurationProperties(RedleaseJdbcProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public final class RedleaseJdbcAutoConfiguration {

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    @Bean
    @ConditionalOnMissingBean
    @DependsOnDatabaseInitialization
    FenceTable redleaseFenceTable(
            DataSource dataSource,
            RedleaseJdbcProperties properties,
            Elections elections,
            ListableBeanFactory beanFactory) {
        if (TransactionManagerFencing.routes(dataSource)) {
            List<String> names =
                    Arrays.stream(beanFactory.getBeanNamesForType(DataSource.class, false, false))
                            .filter(name -> beanFactory.getBean(name) == dataSource)
                            .toList();
            throw new IllegalStateException(
                    "redlease: the DataSource to fence (bean '"
                            + String.join("', '", names)
                            + "', "
                            + dataSource.getClass().getName()
                            + ") is or wraps an AbstractRoutingDataSource: its transactions write"
                            + " to whichever database it routes to, and one fence table cannot"
                            + " fence them all. Fence one target database: declare its DataSource"
                            + " as a bean marked @Primary (or declare a FenceTable and a"
                            + " TransactionFencing bean for it yourself).");
        }
        return FenceTables.prepare(dataSource, properties, elections);
    }

    @Bean
    @ConditionalOnMissingBean
    TransactionFencing transactionFencing(
            FenceTable table,
            LeadershipContext leadership,
            ObjectProvider<FencedTransactionListener> listeners) {
        return new TransactionFencing(table, leadership, all(listeners));
    }

    @Bean
    @ConditionalOnMissingBean
    FenceClaims redleaseFenceClaims(
            ObjectProvider<FenceTable> tables,
            RedleaseJdbcProperties properties,
            ObjectProvider<FencedTransactionListener> listeners) {
        return new FenceClaims(
                tables.orderedStream().toList(), properties.getClaimTimeout(), all(listeners));
    }

    /** Has every elector the auto-configuration builds claim the fence rows when it wins. */
    @Bean
    FenceClaimsCustomizer redleaseFenceClaimsCustomizer(ObjectProvider<FenceClaims> claims) {
        return new FenceClaimsCustomizer(claims);
    }

    /** Names the elections whose electors do not claim (built outside the auto-configuration). */
    @Bean
    SmartInitializingSingleton redleaseFenceClaimsCheck(
            FenceClaimsCustomizer customizer, Elections elections) {
        return () ->
                elections
                        .asMap()
                        .values()
                        .forEach(
                                elector -> {
                                    if (!customizer.claims(elector.name())) {
                                        logger.warn(
                                                "redlease: the elector of election '"
                                                        + elector.name()
                                                        + "' does not claim the fence row when it"
                                                        + " wins a term (it was not built by"
                                                        + " redlease's auto-configuration), so a"
                                                        + " fenced transaction of an older term"
                                                        + " can still commit until this term's"
                                                        + " first fenced commit. Build it with"
                                                        + " ElectorConfig.Builder.observer("
                                                        + "fenceClaims.observer(name)).");
                                    }
                                });
    }

    @Bean
    static BeanPostProcessor redleaseTransactionManagerFencing(
            ObjectProvider<TransactionFencing> fencing,
            ObjectProvider<LeadershipContext> leadership,
            ObjectProvider<RedleaseJdbcProperties> properties) {
        return new TransactionManagerFencing(
                fencing,
                properties,
                () -> {
                    String election = properties.getObject().getElection();
                    try {
                        if (!election.isEmpty()) {
                            leadership.getObject().election(election);
                        }
                    } catch (UnknownElectionException ex) {
                        throw new InvalidConfigurationPropertyValueException(
                                "redlease.jdbc.election",
                                election,
                                "No such election is configured: " + ex.getMessage());
                    }
                });
    }

    private static FencedTransactionListener all(
            ObjectProvider<FencedTransactionListener> listeners) {
        List<FencedTransactionListener> all = listeners.orderedStream().toList();
        return new FencedTransactionListener() {
            @Override
            public void onCommitted(String electionName, long token) {
                all.forEach(listener -> listener.onCommitted(electionName, token));
            }

            @Override
            public void onRefused(String electionName, long token, long newerToken) {
                all.forEach(listener -> listener.onRefused(electionName, token, newerToken));
            }

            @Override
            public void onClaimed(String electionName, long token, String table) {
                all.forEach(listener -> listener.onClaimed(electionName, token, table));
            }

            @Override
            public void onClaimFailed(
                    String electionName, long token, String table, Throwable error) {
                all.forEach(listener -> listener.onClaimFailed(electionName, token, table, error));
            }
        };
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RedleaseMetrics.class)
    @ConditionalOnBean(RedleaseMetrics.class)
    static class Metrics {

        @Bean
        FencedTransactionListener redleaseJdbcMetrics(
                RedleaseMetrics metrics, Elections elections) {
            elections
                    .asMap()
                    .values()
                    .forEach(
                            elector -> {
                                metrics.registerStore(elector.name(), RedleaseMetrics.STORE_JDBC);
                                metrics.registerFenceClaims(elector.name());
                            });
            return new FencedTransactionListener() {
                @Override
                public void onCommitted(String electionName, long token) {
                    metrics.fencedWrite(electionName, RedleaseMetrics.STORE_JDBC, true);
                }

                @Override
                public void onRefused(String electionName, long token, long newerToken) {
                    metrics.fencedWrite(electionName, RedleaseMetrics.STORE_JDBC, false);
                }

                @Override
                public void onClaimed(String electionName, long token, String table) {
                    metrics.fenceClaim(electionName, true);
                }

                @Override
                public void onClaimFailed(
                        String electionName, long token, String table, Throwable error) {
                    metrics.fenceClaim(electionName, false);
                }
            };
        }
    }
}
