package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.UnknownElectionException;
import io.redlease.jdbc.FenceTable;
import io.redlease.jdbc.FencedAnnotationBeanPostProcessor;
import io.redlease.jdbc.FencedTransactionListener;
import io.redlease.jdbc.FencingTransactionListener;
import io.redlease.jdbc.TransactionFencing;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;

/**
 * Auto-configuration of fenced JDBC transactions, when {@code redlease-jdbc} is on the classpath
 * and the application has one {@code DataSource}: the {@link FenceTable} (created or checked at
 * startup, with a row per election), {@link TransactionFencing}, {@code @Fenced} support, and with
 * {@code redlease.jdbc.fence-all-transactions=true} a {@link FencingTransactionListener} on every
 * transaction manager.
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
public final class RedleaseJdbcAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    FenceTable redleaseFenceTable(
            DataSource dataSource, RedleaseJdbcProperties properties, Elections elections) {
        return FenceTables.prepare(dataSource, properties, elections);
    }

    @Bean
    @ConditionalOnMissingBean
    TransactionFencing transactionFencing(
            FenceTable table,
            LeadershipContext leadership,
            ObjectProvider<FencedTransactionListener> listeners) {
        List<FencedTransactionListener> all = listeners.orderedStream().toList();
        return new TransactionFencing(
                table,
                leadership,
                new FencedTransactionListener() {
                    @Override
                    public void onCommitted(String electionName, long token) {
                        all.forEach(listener -> listener.onCommitted(electionName, token));
                    }

                    @Override
                    public void onRefused(String electionName, long token, long newerToken) {
                        all.forEach(
                                listener -> listener.onRefused(electionName, token, newerToken));
                    }
                });
    }

    @Bean
    @ConditionalOnMissingBean
    static FencedAnnotationBeanPostProcessor fencedAnnotationBeanPostProcessor() {
        return new FencedAnnotationBeanPostProcessor();
    }

    @Bean
    @ConditionalOnBooleanProperty("redlease.jdbc.fence-all-transactions")
    static BeanPostProcessor redleaseFenceAllTransactions(
            ObjectProvider<TransactionFencing> fencing,
            ObjectProvider<LeadershipContext> leadership,
            ObjectProvider<RedleaseJdbcProperties> properties) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (bean instanceof AbstractPlatformTransactionManager manager) {
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
                    manager.addListener(
                            new FencingTransactionListener(fencing.getObject(), manager, election));
                }
                return bean;
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
                            elector ->
                                    metrics.registerStore(
                                            elector.name(), RedleaseMetrics.STORE_JDBC));
            return new FencedTransactionListener() {
                @Override
                public void onCommitted(String electionName, long token) {
                    metrics.fencedWrite(electionName, RedleaseMetrics.STORE_JDBC, true);
                }

                @Override
                public void onRefused(String electionName, long token, long newerToken) {
                    metrics.fencedWrite(electionName, RedleaseMetrics.STORE_JDBC, false);
                }
            };
        }
    }
}
