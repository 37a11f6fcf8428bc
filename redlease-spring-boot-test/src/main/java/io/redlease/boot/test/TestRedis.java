package io.redlease.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives a Spring test's application context a real Redis and a {@link RedleaseTester} bean.
 *
 * <p>When the test class declares a Testcontainers field annotated with {@code @ServiceConnection},
 * that container is the Redis and nothing else is started. Otherwise one Redis is shared by the
 * whole test JVM: the server named by the {@code REDLEASE_TEST_REDIS_URL} environment variable if
 * set; else a {@code redis-server} from the {@code PATH}, started on a free loopback port without
 * persistence and stopped when the JVM exits; else a Testcontainers {@code redis} container when
 * Docker is available; else the context fails to start, saying what to install. The context's
 * {@code spring.data.redis.url} points at it, above the application's own properties.
 *
 * <p>Tests that share the server must use their own election names (for example with a
 * {@code @DynamicPropertySource} for {@code redlease.name}) and must not flush it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface TestRedis {}
