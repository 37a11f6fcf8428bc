package io.redlease.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports leader election enabled without a Redis connection factory. */
class MissingRedisConnectionFactoryFailureAnalyzer
        extends AbstractFailureAnalyzer<MissingRedisConnectionFactoryException> {

    @Override
    protected FailureAnalysis analyze(
            Throwable rootFailure, MissingRedisConnectionFactoryException cause) {
        return new FailureAnalysis(
                "redlease leader election is enabled, but the application has no"
                        + " RedisConnectionFactory bean to reach Redis with.",
                "Add spring-boot-starter-data-redis (the redlease starter brings it) and set"
                        + " spring.data.redis.host/port or spring.data.redis.url, or define a"
                        + " RedisConnectionFactory bean; or set redlease.enabled=false.",
                cause);
    }
}
