package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.jdbc.FencingTransactionListener;
import io.redlease.jdbc.TransactionFencing;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Adds a {@link FencingTransactionListener} to every transaction manager bean whose transactions
 * bind connections of the fenced {@code DataSource} ({@code DataSourceTransactionManager}, {@code
 * JpaTransactionManager}), so its fenced transactions are stamped just before they commit; with
 * {@code redlease.jdbc.fence-all-transactions} the listener fences all its read-write transactions.
 *
 * <p>With fence-all on, a transaction manager whose data source cannot be told (JTA, a custom
 * manager, a JPA entity manager factory without a known data source) or that takes no listeners (a
 * {@code PlatformTransactionManager} that is no {@code AbstractPlatformTransactionManager}) fails
 * startup, naming the bean: its transactions would run unfenced. A manager of another known data
 * source is left alone (its transactions are not on the fenced data source) and logged at INFO.
 */
final class TransactionManagerFencing implements BeanPostProcessor {

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    private static final boolean JPA_PRESENT =
            ClassUtils.isPresent(
                    "org.springframework.orm.jpa.JpaTransactionManager",
                    TransactionManagerFencing.class.getClassLoader());

    private final ObjectProvider<TransactionFencing> fencing;

    private final ObjectProvider<RedleaseJdbcProperties> properties;

    private final Runnable checkElection;

    TransactionManagerFencing(
            ObjectProvider<TransactionFencing> fencing,
            ObjectProvider<RedleaseJdbcProperties> properties,
            Runnable checkElection) {
        this.fencing = fencing;
        this.properties = properties;
        this.checkElection = checkElection;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof PlatformTransactionManager)) {
            return bean;
        }
        RedleaseJdbcProperties settings = properties.getObject();
        boolean fenceAll = settings.isFenceAllTransactions();
        if (!(bean instanceof AbstractPlatformTransactionManager manager)) {
            if (fenceAll) {
                throw refused(
                        beanName,
                        bean,
                        "it is no AbstractPlatformTransactionManager, so it takes no transaction"
                                + " listener and its transactions would run unfenced",
                        "Use a DataSourceTransactionManager or JpaTransactionManager of the"
                                + " fenced DataSource, or set"
                                + " redlease.jdbc.fence-all-transactions=false and fence with"
                                + " @Fenced (whose calls such a manager's transactions refuse).");
            }
            return bean;
        }
        if (fenceAll) {
            checkElection.run();
        }
        TransactionFencing fencing = this.fencing.getObject();
        DataSource fenced = fencing.table().transactionalDataSource();
        @Nullable DataSource managed = dataSource(manager);
        if (managed == fenced) {
            if (fenceAll
                    && manager.getTransactionSynchronization()
                            == AbstractPlatformTransactionManager.SYNCHRONIZATION_NEVER) {
                throw refused(
                        beanName,
                        manager,
                        "its transaction synchronization is off (SYNCHRONIZATION_NEVER), so its"
                                + " transactions cannot be stamped",
                        "Leave transactionSynchronization at its default.");
            }
            manager.addListener(
                    fenceAll
                            ? new FencingTransactionListener(fencing, settings.getElection())
                            : new FencingTransactionListener(fencing));
        } else if (fenceAll && managed == null) {
            throw refused(
                    beanName,
                    manager,
                    "redlease cannot tell which DataSource its transactions bind (JTA, a custom"
                            + " transaction manager, or an entity manager factory without a known"
                            + " DataSource), so they would run unfenced",
                    "Run the application's transactions with a DataSourceTransactionManager or"
                            + " JpaTransactionManager of the fenced DataSource, or set"
                            + " redlease.jdbc.fence-all-transactions=false and fence with @Fenced"
                            + " (whose calls such a manager's transactions refuse).");
        } else if (managed != null && logger.isInfoEnabled()) {
            logger.info(
                    "redlease: transaction manager bean '"
                            + beanName
                            + "' manages another DataSource than the fenced one; its transactions"
                            + " are not fenced, and @Fenced calls in them are refused");
        }
        return bean;
    }

    private static BeanCreationException refused(
            String beanName, Object manager, String why, String fix) {
        return new BeanCreationException(
                beanName,
                "redlease: redlease.jdbc.fence-all-transactions=true, but transaction manager bean '"
                        + beanName
                        + "' ("
                        + manager.getClass().getName()
                        + ") cannot be fenced: "
                        + why
                        + ". "
                        + fix);
    }

    /** The data source whose connections the manager binds, or null when it cannot be told. */
    static @Nullable DataSource dataSource(AbstractPlatformTransactionManager manager) {
        @Nullable DataSource dataSource = null;
        if (manager instanceof DataSourceTransactionManager jdbc) {
            dataSource = jdbc.getDataSource();
        } else if (JPA_PRESENT) {
            dataSource = Jpa.dataSource(manager);
        }
        return dataSource instanceof TransactionAwareDataSourceProxy proxy
                        && proxy.getTargetDataSource() != null
                ? proxy.getTargetDataSource()
                : dataSource;
    }

    /** Kept apart so that the class loads without spring-orm. */
    private static final class Jpa {

        static @Nullable DataSource dataSource(Object manager) {
            return manager instanceof JpaTransactionManager jpa ? jpa.getDataSource() : null;
        }
    }
}
