package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.HierarchicalBeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * With redlease enabled, fails startup when {@link RedleaseAutoConfiguration} backed off for want
 * of a single {@link RedisConnectionFactory}: none, or several and none primary. It runs once the
 * bean definitions are complete and before any bean is created, so the application stops with this
 * reason (and the fix) rather than with a bean missing the {@code LeadershipContext} it injects.
 *
 * <p>It stays silent when the auto-configuration applied (here or in a parent context), when the
 * application declares its own {@link Elections}, and when one connection factory is a single
 * candidate (the auto-configuration was then excluded on purpose).
 */
final class RedisConnectionFactoryCheck implements BeanFactoryPostProcessor {

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        if (names(beanFactory, ElectorFactory.class).length > 0
                || names(beanFactory, Elections.class).length > 0) {
            return;
        }
        String[] factories = names(beanFactory, RedisConnectionFactory.class);
        if (factories.length == 0) {
            throw new RedleaseUnavailableException(
                    "the application has no RedisConnectionFactory bean (Spring Boot's Redis"
                            + " auto-configuration, from spring-boot-starter-data-redis, creates one"
                            + " unless it is excluded or the application declares its own).",
                    "Configure Redis (spring-boot-starter-data-redis and spring.data.redis.*, or a"
                            + " RedisConnectionFactory bean), or set redlease.enabled=false to run"
                            + " without leader election (@LeaderOnly methods then run on every"
                            + " instance).");
        }
        if (factories.length > 1 && !hasSingleCandidate(beanFactory, factories)) {
            throw new RedleaseUnavailableException(
                    "the application has "
                            + factories.length
                            + " RedisConnectionFactory beans ("
                            + String.join(", ", factories)
                            + ") and none is marked @Primary, so redlease cannot tell which Redis"
                            + " holds the leases.",
                    "Mark the RedisConnectionFactory that redlease should use @Primary, or set"
                            + " redlease.enabled=false to run without leader election (@LeaderOnly"
                            + " methods then run on every instance).");
        }
    }

    private static String[] names(ConfigurableListableBeanFactory beanFactory, Class<?> type) {
        return BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beanFactory, type, true, false);
    }

    /**
     * As Boot's single candidate: one primary bean, else one that is not a fallback (a singleton
     * registered without a definition is neither).
     */
    private static boolean hasSingleCandidate(BeanFactory beanFactory, String[] names) {
        int primary = 0;
        int preferred = 0;
        for (String name : names) {
            BeanDefinition definition = definition(beanFactory, name);
            if (definition != null && definition.isPrimary()) {
                primary++;
            }
            if (definition == null || !definition.isFallback()) {
                preferred++;
            }
        }
        return primary > 0 ? primary == 1 : preferred == 1;
    }

    private static @Nullable BeanDefinition definition(BeanFactory beanFactory, String name) {
        for (@Nullable BeanFactory factory = beanFactory;
                factory != null;
                factory =
                        factory instanceof HierarchicalBeanFactory hierarchical
                                ? hierarchical.getParentBeanFactory()
                                : null) {
            if (factory instanceof ConfigurableListableBeanFactory listable
                    && listable.containsBeanDefinition(name)) {
                return listable.getMergedBeanDefinition(name);
            }
        }
        return null;
    }
}
