package io.redlease.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Asks {@link RedisExtension} for a fresh {@link RedisServer} for this one parameter, closed when
 * the test method (or, on a {@code @BeforeAll} method, the test class) ends.
 *
 * <p>Use it for fault tests that stop, kill, pause or restart the server, or that need options such
 * as persistence or a password. Each annotated parameter gets its own server.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface Dedicated {

    /**
     * Whether the server writes an append-only file that {@link RedisServer#restart()} reloads.
     *
     * @return {@code true} for {@code --appendonly yes}
     */
    boolean appendOnly() default false;

    /**
     * The AOF fsync policy, {@code always}, {@code everysec} or {@code no}; empty for the Redis
     * default.
     *
     * @return the {@code --appendfsync} value, or empty
     */
    String appendFsync() default "";

    /**
     * A password clients must send with {@code AUTH}; empty for none.
     *
     * @return the {@code --requirepass} value, or empty
     */
    String requirePass() default "";

    /**
     * Raw {@code redis-server} arguments, for example {@code {"--maxmemory-policy",
     * "allkeys-lru"}}.
     *
     * @return extra arguments, empty by default
     */
    String[] extraArgs() default {};
}
