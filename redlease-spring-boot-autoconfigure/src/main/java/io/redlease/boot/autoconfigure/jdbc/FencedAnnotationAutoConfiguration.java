package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.core.Elections;
import io.redlease.jdbc.Fenced;
import io.redlease.jdbc.FencedAnnotationBeanPostProcessor;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Applies {@link Fenced @Fenced} whenever {@code redlease-jdbc} is on the class path, also where
 * {@link RedleaseJdbcAutoConfiguration} backs off: then a bean with {@code @Fenced} methods fails
 * startup, naming the method, why there is no fencing and what to do, instead of running its
 * transactions unfenced. With {@code redlease.enabled=false} such beans are created and every
 * {@code @Fenced} call fails with {@code UnfencedTransactionException}, so nothing runs unfenced.
 * With {@code redlease.jdbc.fence-all-transactions=true} where that auto-configuration backed off
 * (or redlease is disabled), startup fails naming the property and why.
 */
@AutoConfiguration(after = RedleaseJdbcAutoConfiguration.class)
@ConditionalOnClass(Fenced.class)
public final class FencedAnnotationAutoConfiguration {

    private static final String EMBEDDED_DATABASE_CONNECTION =
            "org.springframework.boot.jdbc.EmbeddedDatabaseConnection";

    @Bean
    @ConditionalOnMissingBean
    static FencedAnnotationBeanPostProcessor fencedAnnotationBeanPostProcessor(
            Environment environment, BeanFactory beanFactory) {
        FencedAnnotationBeanPostProcessor postProcessor = new FencedAnnotationBeanPostProcessor();
        boolean enabled = environment.getProperty("redlease.enabled", Boolean.class, true);
        postProcessor.setFailWithoutFencing(enabled);
        postProcessor.setMissingFencingReason(() -> reason(enabled, beanFactory));
        return postProcessor;
    }

    /**
     * Fails startup when every transaction is to be fenced but redlease's JDBC auto-configuration
     * backed off, so that no transaction manager would fence anything.
     */
    @Bean
    @ConditionalOnBooleanProperty("redlease.jdbc.fence-all-transactions")
    static SmartInitializingSingleton redleaseFenceAllCheck(
            Environment environment, ListableBeanFactory beanFactory) {
        return () -> {
            if (!beanFactory.containsBean("redleaseTransactionManagerFencing")) {
                boolean enabled = environment.getProperty("redlease.enabled", Boolean.class, true);
                throw new InvalidConfigurationPropertyValueException(
                        "redlease.jdbc.fence-all-transactions",
                        "true",
                        "Every transaction is to be fenced, but redlease's JDBC auto-configuration"
                                + " did not apply, so no transaction would be fenced. "
                                + reason(enabled, beanFactory));
            }
        };
    }

    /** Says why redlease's JDBC auto-configuration did not create a TransactionFencing bean. */
    static String reason(boolean enabled, BeanFactory beanFactory) {
        if (!enabled) {
            return "redlease is disabled (redlease.enabled=false). Enable it, or call @Fenced"
                    + " methods only where redlease is enabled.";
        }
        ClassLoader classLoader =
                beanFactory instanceof ConfigurableBeanFactory configurable
                        ? configurable.getBeanClassLoader()
                        : FencedAnnotationAutoConfiguration.class.getClassLoader();
        if (!ClassUtils.isPresent(EMBEDDED_DATABASE_CONNECTION, classLoader)) {
            return "redlease's JDBC auto-configuration needs spring-boot-jdbc, which is not on the"
                    + " class path: add spring-boot-starter-jdbc (or spring-boot-starter-data-jpa).";
        }
        if (beanFactory instanceof ListableBeanFactory listable) {
            String[] dataSources =
                    BeanFactoryUtils.beanNamesForTypeIncludingAncestors(
                            listable, DataSource.class, true, false);
            if (dataSources.length == 0) {
                return "The application has no DataSource bean to fence.";
            }
            if (dataSources.length > 1 && primary(listable, dataSources) == null) {
                return "The application has "
                        + dataSources.length
                        + " DataSource beans ("
                        + String.join(", ", dataSources)
                        + ") and none is @Primary, so redlease's JDBC auto-configuration does not"
                        + " know which one to fence: mark the fenced one @Primary, or declare a"
                        + " FenceTable and a TransactionFencing bean for it yourself.";
            }
            if (BeanFactoryUtils.beanNamesForTypeIncludingAncestors(
                                    listable, Elections.class, true, false)
                            .length
                    == 0) {
                return "There are no elections (redlease's auto-configuration needs exactly one"
                        + " RedisConnectionFactory, or one marked @Primary).";
            }
        }
        return "Declare a TransactionFencing bean for the fenced DataSource, or see the"
                + " conditions report (--debug) for why redlease's JDBC auto-configuration backed"
                + " off.";
    }

    private static @Nullable String primary(ListableBeanFactory beanFactory, String[] names) {
        if (beanFactory instanceof ConfigurableListableBeanFactory configurable) {
            for (String name : names) {
                if (configurable.containsBeanDefinition(name)
                        && configurable.getBeanDefinition(name).isPrimary()) {
                    return name;
                }
            }
        }
        return null;
    }
}
