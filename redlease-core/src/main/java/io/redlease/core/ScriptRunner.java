package io.redlease.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveRedisTemplate;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializationContext;
import org.springframework.data.redis.serializer.RedisSerializer;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Runs the engine's scripts without blocking the caller: the reply comes as a future. Cancelling
 * the future abandons the call.
 *
 * <p>With a reactive connection factory (Lettuce, Boot's default) a call parks no thread while in
 * flight. With a blocking-only factory (Jedis) calls run on a small bounded pool shared by every
 * elector in the JVM: while Redis hangs, later calls queue behind the ones waiting for it, and the
 * engine's own deadlines still end every wait on time.
 */
interface ScriptRunner {

    /** Threads of the pool that serves blocking-only connection factories. */
    int BLOCKING_THREADS = 8;

    /**
     * Runs a script; the future completes with its reply, or with the Spring {@code
     * DataAccessException} it failed with.
     */
    <T> CompletableFuture<T> run(RedisScript<T> script, List<String> keys, List<String> args);

    /** Returns the runner for the given operations: reactive when their factory allows it. */
    static ScriptRunner of(RedisOperations<String, String> redis, RedisConnectionFactory factory) {
        if (factory instanceof ReactiveRedisConnectionFactory) {
            return Reactive.of(factory);
        }
        return new Blocking(redis);
    }

    /**
     * Runs scripts through the reactive template of the connection factory.
     *
     * <p>Subscribing opens the factory's shared connection if it is not open yet, and that waits
     * for the server. Until a call has succeeded, and again after a connection failure, calls are
     * therefore subscribed on the blocking pool, so a server that does not answer the handshake
     * never holds a loop thread.
     */
    final class Reactive implements ScriptRunner {

        private final ReactiveRedisTemplate<String, String> template;

        private volatile boolean connected;

        private Reactive(ReactiveRedisTemplate<String, String> template) {
            this.template = template;
        }

        static Reactive of(RedisConnectionFactory factory) {
            return new Reactive(
                    new ReactiveRedisTemplate<>(
                            (ReactiveRedisConnectionFactory) factory,
                            RedisSerializationContext.string()));
        }

        @Override
        public <T> CompletableFuture<T> run(
                RedisScript<T> script, List<String> keys, List<String> args) {
            // One reply, a multi-bulk one as a single list; cancelling the future cancels it.
            Mono<T> reply = template.execute(script, keys, args).next();
            if (!connected) {
                reply = reply.subscribeOn(Schedulers.fromExecutor(Blocking.POOL));
            }
            return reply.doOnSuccess(value -> connected = true)
                    .doOnError(RedisConnectionFailureException.class, failure -> connected = false)
                    .toFuture();
        }
    }

    /** Runs scripts on the blocking template, on the shared bounded pool. */
    final class Blocking implements ScriptRunner {

        static final ThreadPoolExecutor POOL = pool();

        private final RedisOperations<String, String> redis;

        Blocking(RedisOperations<String, String> redis) {
            this.redis = redis;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public <T> CompletableFuture<T> run(
                RedisScript<T> script, List<String> keys, List<String> args) {
            RedisSerializer string = RedisSerializer.string();
            return CompletableFuture.supplyAsync(
                    () ->
                            (T)
                                    redis.execute(
                                            script,
                                            string,
                                            string,
                                            keys,
                                            args.toArray(Object[]::new)),
                    POOL);
        }

        /** Runs a blocking call on the pool. */
        static <T> CompletableFuture<T> supply(Supplier<T> call) {
            return CompletableFuture.supplyAsync(call, POOL);
        }

        private static ThreadPoolExecutor pool() {
            AtomicInteger threads = new AtomicInteger();
            ThreadPoolExecutor pool =
                    new ThreadPoolExecutor(
                            BLOCKING_THREADS,
                            BLOCKING_THREADS,
                            30,
                            TimeUnit.SECONDS,
                            new LinkedBlockingQueue<>(),
                            runnable ->
                                    ElectorRuntime.daemon(
                                            runnable,
                                            "redlease-redis-" + threads.incrementAndGet()));
            pool.allowCoreThreadTimeOut(true);
            return pool;
        }
    }
}
