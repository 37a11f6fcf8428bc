package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.jdbc.FencingTransactionListener;
import io.redlease.jdbc.TransactionFencing;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;
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
 * source is left alone (its transactions are not on the fenced data source) and logged at INFO; a
 * manager of a data source that routes ({@code AbstractRoutingDataSource}) or wraps the fenced one
 * fails startup, since its transactions write to the fenced database without binding its
 * connections.
 *
 * <p>Once every singleton is created, a transaction manager bean of the fenced data source that has
 * no listener of the fencing (it was created before this post-processor, as a dependency of a
 * {@code BeanPostProcessor}, or was wrapped so that the listener could not be added) fails startup,
 * naming the bean, whether fence-all is on or not. Two {@code TransactionFencing} beans and none
 * {@code @Primary} fail startup naming both.
 */
final class TransactionManagerFencing
        implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    private static final boolean JPA_PRESENT =
            ClassUtils.isPresent(
                    "org.springframework.orm.jpa.JpaTransactionManager",
                    TransactionManagerFencing.class.getClassLoader());

    private final ObjectProvider<TransactionFencing> fencing;

    private final ObjectProvider<RedleaseJdbcProperties> properties;

    private final Runnable checkElection;

    private @Nullable ListableBeanFactory beanFactory;

    TransactionManagerFencing(
            ObjectProvider<TransactionFencing> fencing,
            ObjectProvider<RedleaseJdbcProperties> properties,
            Runnable checkElection) {
        this.fencing = fencing;
        this.properties = properties;
        this.checkElection = checkElection;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ListableBeanFactory listable ? listable : null;
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
        TransactionFencing fencing = fencing(beanName);
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
        } else if (fenceAll && managed != null && routes(managed)) {
            throw refused(
                    beanName,
                    manager,
                    "its DataSource is or wraps an AbstractRoutingDataSource, so redlease cannot"
                            + " tell which database its transactions write to",
                    "Give the fenced database a transaction manager of its own DataSource, or set"
                            + " redlease.jdbc.fence-all-transactions=false and fence with @Fenced"
                            + " (whose calls such a manager's transactions refuse).");
        } else if (fenceAll && managed != null && wraps(managed, fenced)) {
            throw refused(
                    beanName,
                    manager,
                    "its DataSource wraps the fenced DataSource, so its transactions write to the"
                            + " fenced database without binding the fenced DataSource's"
                            + " connections and would run unfenced",
                    "Build the transaction manager on the fenced DataSource itself, or set"
                            + " redlease.jdbc.fence-all-transactions=false and fence with @Fenced"
                            + " (whose calls such a manager's transactions refuse).");
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

    /** Refuses transaction managers of the fenced data source that did not get the listener. */
    @Override
    public void afterSingletonsInstantiated() {
        ListableBeanFactory factory = beanFactory;
        if (factory == null) {
            return;
        }
        String[] names =
                factory.getBeanNamesForType(PlatformTransactionManager.class, false, false);
        if (names.length == 0) {
            return;
        }
        TransactionFencing fencing = fencing(names[0]);
        DataSource fenced = fencing.table().transactionalDataSource();
        for (String name : names) {
            Object bean = factory.getBean(name);
            Object target = bean;
            for (Object inner = AopProxyUtils.getSingletonTarget(target);
                    inner != null;
                    inner = AopProxyUtils.getSingletonTarget(target)) {
                target = inner;
            }
            if (target instanceof AbstractPlatformTransactionManager manager
                    && dataSource(manager) == fenced
                    && manager.getTransactionExecutionListeners().stream()
                            .noneMatch(
                                    listener ->
                                            listener instanceof FencingTransactionListener ours
                                                    && ours.fencing() == fencing)) {
                throw new BeanCreationException(
                        name,
                        "redlease: transaction manager bean '"
                                + name
                                + "' manages the fenced DataSource but has no"
                                + " FencingTransactionListener of "
                                + fencing
                                + ": it was created before redlease's post-processor could add"
                                + " one (a BeanPostProcessor or a bean it depends on needs it),"
                                + " or it was wrapped first, so its transactions cannot be"
                                + " fenced. Do not make a BeanPostProcessor depend on it (inject"
                                + " an ObjectProvider instead), or add the listener yourself:"
                                + " manager.addListener(new FencingTransactionListener("
                                + "transactionFencing)).");
            }
        }
    }

    private TransactionFencing fencing(String beanName) {
        try {
            return this.fencing.getObject();
        } catch (NoUniqueBeanDefinitionException ex) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: there are "
                            + ex.getNumberOfBeansFound()
                            + " TransactionFencing beans ("
                            + String.join(", ", ex.getBeanNamesFound())
                            + ") and none is @Primary, so redlease cannot tell which one fences"
                            + " the transactions of its transaction managers and @Fenced"
                            + " methods. Mark the fencing of the fenced DataSource @Primary;"
                            + " fence the other DataSources' transactions with fence() and a"
                            + " FencingTransactionListener you add to their managers.",
                    ex);
        }
    }

    /** Whether the data source is, or wraps, a routing data source. */
    static boolean routes(DataSource dataSource) {
        for (DataSource each = dataSource; each != null; ) {
            if (each instanceof AbstractRoutingDataSource) {
                return true;
            }
            each =
                    each instanceof DelegatingDataSource delegating
                            ? delegating.getTargetDataSource()
                            : null;
        }
        try {
            return dataSource.isWrapperFor(AbstractRoutingDataSource.class);
        } catch (SQLException | RuntimeException ex) {
            return false;
        }
    }

    /** Whether the data source wraps the fenced one (a chain of delegating data sources). */
    private static boolean wraps(DataSource dataSource, DataSource fenced) {
        for (DataSource each = dataSource; each instanceof DelegatingDataSource delegating; ) {
            each = delegating.getTargetDataSource();
            if (each == fenced) {
                return true;
            }
        }
        return false;
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
