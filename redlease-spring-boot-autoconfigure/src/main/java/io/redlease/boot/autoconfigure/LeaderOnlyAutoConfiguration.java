package io.redlease.boot.autoconfigure;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration that applies {@link LeaderOnly @LeaderOnly} to the application's beans.
 *
 * <p>With {@code redlease.enabled=false} it backs off with the elections: the annotation is then
 * not applied and annotated methods run on every instance.
 */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnClass({LeaderOnly.class, AbstractBeanFactoryAwareAdvisingPostProcessor.class})
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
public final class LeaderOnlyAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyAnnotationBeanPostProcessor() {
        return new LeaderOnlyAnnotationBeanPostProcessor();
    }
}
