package io.redlease.boot.autoconfigure;

import io.redlease.core.Elector;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Startup checks that name a mistake instead of letting it pass silently or surface as something
 * else: a WARN for each {@code redlease.*} key that no property has, whether redlease is enabled or
 * not; and, while redlease is enabled, a failure naming the property and its values when a property
 * that takes one of a set of values is set blank, and a failure naming the reason and the fix when
 * {@link RedleaseAutoConfiguration} backed off for want of a single {@code RedisConnectionFactory}.
 */
@AutoConfiguration
public final class RedleaseChecksAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(UnknownPropertyWarning.class)
    static UnknownPropertyWarning redleaseUnknownPropertyWarning() {
        return new UnknownPropertyWarning();
    }

    @Bean
    @ConditionalOnMissingBean(BlankChoiceCheck.class)
    static BlankChoiceCheck redleaseBlankChoiceCheck() {
        return new BlankChoiceCheck();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Elector.class, RedisConnectionFactory.class})
    @ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
    static class Redis {

        @Bean
        static RedisConnectionFactoryCheck redleaseRedisConnectionFactoryCheck() {
            return new RedisConnectionFactoryCheck();
        }
    }
}
