package io.redlease.boot.autoconfigure;

/** Leader election is enabled but the application has no Redis connection factory. */
class MissingRedisConnectionFactoryException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    MissingRedisConnectionFactoryException() {
        super("redlease needs a RedisConnectionFactory bean, and there is none");
    }
}
