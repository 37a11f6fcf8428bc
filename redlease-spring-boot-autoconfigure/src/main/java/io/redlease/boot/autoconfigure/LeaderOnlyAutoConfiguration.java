package io.redlease.boot.autoconfigure;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration that applies {@link LeaderOnly @LeaderOnly} to the application's beans.
 *
 * <p>The leadership check is the outermost advice of a bean that other advice (such as {@code
 * Transactional}) already proxies, so a follower's skipped call opens no transaction; advice that
 * hands the call to another thread ({@code @Async}) still runs before it.
 *
 * <p>With {@code redlease.enabled=false} the annotation is not applied and annotated methods run on
 * every instance; a warning at startup lists them.
 */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnClass({LeaderOnly.class, AbstractBeanFactoryAwareAdvisingPostProcessor.class})
public final class LeaderOnlyAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
    static class Enabled {

        @Bean
        @ConditionalOnMissingBean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyAnnotationBeanPostProcessor() {
            LeaderOnlyAnnotationBeanPostProcessor postProcessor =
                    new LeaderOnlyAnnotationBeanPostProcessor();
            // The auto-proxy creator (transactions, aspects) has already proxied the bean when
            // this post-processor runs: go in front of its advisors.
            postProcessor.setBeforeExistingAdvisors(true);
            return postProcessor;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "redlease.enabled", havingValue = false)
    static class Disabled {

        @Bean
        static LeaderOnlyDisabledWarning leaderOnlyDisabledWarning() {
            return new LeaderOnlyDisabledWarning();
        }
    }
}
