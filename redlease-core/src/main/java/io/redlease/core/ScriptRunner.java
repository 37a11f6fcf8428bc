package io.redlease.core;

import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveRedisTemplate;
import org.springframework.data.redis.core.RedisCallback;
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
 * <p>With Lettuce (Boot's default) a call parks no thread while in flight. With a blocking-only
 * factory (Jedis) calls run on a small bounded pool shared by every elector in the JVM: while Redis
 * hangs, later calls queue behind the ones waiting for it, and the engine's own deadlines still end
 * every wait on time.
 */
interface ScriptRunner {

    /** Threads of the pool that serves blocking-only connection factories. */
    int BLOCKING_THREADS = 8;

    /**
     * Runs a script; the future completes with its reply, or with the Spring {@code
     * DataAccessException} it failed with.
     */
    <T> CompletableFuture<T> run(RedisScript<T> script, List<String> keys, List<String> args);

    /**
     * Opens the connection the scripts run on, unless it is open: completes once it is, or with the
     * failure. Opening waits for the server (connect and handshake), so it runs on the blocking
     * pool, never on the caller's thread, and a runner makes one attempt at a time: a caller that
     * comes while one is in flight waits for that one. Cancelling the returned future abandons only
     * the wait for it.
     */
    CompletableFuture<Void> connect();

    /**
     * Returns the runner for the given operations: Lettuce's asynchronous API on the factory's
     * shared connection (Boot's default), the reactive API for other reactive factories (Lettuce
     * with a pool), else the blocking pool.
     */
    static ScriptRunner of(RedisOperations<String, String> redis, RedisConnectionFactory factory) {
        if (factory instanceof LettuceConnectionFactory lettuce
                && lettuce.getShareNativeConnection()) {
            synchronized (Async.BY_FACTORY) {
                return Async.BY_FACTORY.computeIfAbsent(lettuce, Async::new);
            }
        }
        if (factory instanceof ReactiveRedisConnectionFactory) {
            return Reactive.of(factory);
        }
        return new Blocking(redis);
    }

    /**
     * Runs scripts with Lettuce's asynchronous API on the connection factory's shared connection,
     * the one its templates use: EVALSHA, then EVAL when the server does not know the script.
     *
     * <p>Opening the shared connection waits for the server, so until the runner has it, calls
     * fetch it on the blocking pool: a server that does not answer the handshake never holds a loop
     * thread. A closed connection (a failed one, or one the factory closed when it was stopped) is
     * dropped and fetched again. The electors of one factory share one runner.
     */
    final class Async implements ScriptRunner {

        /** One runner per factory, so the electors on it fetch its shared connection once. */
        static final Map<LettuceConnectionFactory, Async> BY_FACTORY = new WeakHashMap<>();

        private final LettuceConnectionFactory factory;

        private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

        /** The attempt to open the shared connection in progress, if any; guarded by this. */
        private @Nullable CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> connecting;

        Async(LettuceConnectionFactory factory) {
            this.factory = factory;
        }

        @Override
        public CompletableFuture<Void> connect() {
            RedisClusterAsyncCommands<byte[], byte[]> current = commands;
            if (current != null && !closed(current)) {
                return CompletableFuture.completedFuture(null);
            }
            CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> attempt;
            synchronized (this) {
                attempt = connecting;
                if (attempt == null || attempt.isDone()) {
                    attempt = Blocking.supply(this::connectShared);
                    connecting = attempt;
                }
            }
            return attempt.handle(
                    (connected, error) -> {
                        if (error != null) {
                            throw translate(error);
                        }
                        return null;
                    });
        }

        @Override
        public <T> CompletableFuture<T> run(
                RedisScript<T> script, List<String> keys, List<String> args) {
            RedisClusterAsyncCommands<byte[], byte[]> current = commands;
            if (closed(current)) {
                // The factory was stopped (a context's stop()) or reset: its shared connection is
                // closed for good, and a started factory hands out a new one.
                commands = null;
                current = null;
            }
            Reply<T> reply = new Reply<>();
            if (current != null) {
                send(current, script, keys, args, reply);
                return reply;
            }
            CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> connected =
                    Blocking.supply(this::connectShared);
            reply.command = connected;
            connected.whenComplete(
                    (opened, error) -> {
                        try {
                            if (error != null) {
                                fail(reply, error);
                            } else if (!reply.isDone()) {
                                send(opened, script, keys, args, reply);
                            }
                        } catch (Throwable ex) {
                            reply.completeExceptionally(ex);
                        }
                    });
            return reply;
        }

        /**
         * The reply of one call, completed straight from the client's callback (one dependent on
         * the client's future, not a chain of stages, on every call): cancelling it cancels the
         * command it waits for.
         */
        private static final class Reply<T> extends CompletableFuture<T> {

            private volatile @Nullable Future<?> command;

            void await(Future<?> next) {
                command = next;
                if (isCancelled()) {
                    next.cancel(true);
                }
            }

            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                boolean cancelled = super.cancel(mayInterruptIfRunning);
                Future<?> current = command;
                if (cancelled && current != null) {
                    current.cancel(true);
                }
                return cancelled;
            }
        }

        private RedisClusterAsyncCommands<byte[], byte[]> connectShared() {
            try (RedisConnection connection = factory.getConnection()) {
                RedisClusterAsyncCommands<byte[], byte[]> shared =
                        ((LettuceConnection) connection).getNativeConnection();
                commands = shared;
                return shared;
            }
        }

        /** Sends EVALSHA, then EVAL if the server does not know the script, and completes. */
        @SuppressWarnings("unchecked")
        private <T> void send(
                RedisClusterAsyncCommands<byte[], byte[]> commands,
                RedisScript<T> script,
                List<String> keys,
                List<String> args,
                Reply<T> reply) {
            ScriptOutputType type =
                    List.class.isAssignableFrom(script.getResultType())
                            ? ScriptOutputType.MULTI
                            : ScriptOutputType.INTEGER;
            byte[][] keyBytes = bytes(keys);
            byte[][] argBytes = bytes(args);
            RedisFuture<Object> first;
            try {
                first = commands.evalsha(script.getSha1(), type, keyBytes, argBytes);
            } catch (RuntimeException ex) {
                fail(reply, ex);
                return;
            }
            reply.await(first);
            first.whenComplete(
                    (value, error) -> {
                        if (error == null) {
                            reply.complete((T) value);
                        } else if (unwrap(error) instanceof RedisNoScriptException) {
                            RedisFuture<Object> again;
                            try {
                                again =
                                        commands.eval(
                                                script.getScriptAsString(),
                                                type,
                                                keyBytes,
                                                argBytes);
                            } catch (RuntimeException ex) {
                                fail(reply, ex);
                                return;
                            }
                            reply.await(again);
                            again.whenComplete(
                                    (evaluated, failure) -> {
                                        if (failure == null) {
                                            reply.complete((T) evaluated);
                                        } else {
                                            fail(reply, failure);
                                        }
                                    });
                        } else {
                            fail(reply, error);
                        }
                    });
        }

        private void fail(CompletableFuture<?> reply, Throwable error) {
            RuntimeException translated;
            try {
                translated = translate(error);
            } catch (RuntimeException ex) {
                translated = ex;
            }
            reply.completeExceptionally(translated);
        }

        private RuntimeException translate(Throwable error) {
            Throwable cause = unwrap(error);
            if (cause instanceof RuntimeException runtime) {
                DataAccessException translated = factory.translateExceptionIfPossible(runtime);
                RedisClusterAsyncCommands<byte[], byte[]> current = commands;
                if (translated instanceof RedisConnectionFailureException
                        || cause instanceof RedisException
                                && (!factory.isRunning() || closed(current))) {
                    commands = null;
                }
                return translated != null ? translated : runtime;
            }
            return new RedisSystemException("redlease: script failed", cause);
        }

        /**
         * Returns whether the shared connection behind {@code commands} is closed (the factory was
         * stopped or reset); false when unknown or null.
         */
        private static boolean closed(
                @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands) {
            StatefulConnection<?, ?> connection =
                    commands instanceof RedisAsyncCommands<?, ?> standalone
                            ? standalone.getStatefulConnection()
                            : commands instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster
                                    ? cluster.getStatefulConnection()
                                    : null;
            return connection != null && !connection.isOpen();
        }

        private static Throwable unwrap(Throwable error) {
            Throwable cause = error;
            while (cause instanceof CompletionException && cause.getCause() != null) {
                cause = cause.getCause();
            }
            return cause;
        }

        private static byte[][] bytes(List<String> values) {
            byte[][] bytes = new byte[values.size()][];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
            }
            return bytes;
        }
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

        /** The attempt to connect in progress, if any; guarded by this. */
        private @Nullable CompletableFuture<Void> connecting;

        private Reactive(ReactiveRedisTemplate<String, String> template) {
            this.template = template;
        }

        static Reactive of(RedisConnectionFactory factory) {
            return new Reactive(
                    new ReactiveRedisTemplate<>(
                            (ReactiveRedisConnectionFactory) factory,
                            RedisSerializationContext.string()));
        }

        /**
         * Opens a connection with a {@code PING} on the blocking pool, until one has succeeded;
         * from then on a connection the factory has to open again is opened by the call that needs
         * it.
         */
        @Override
        public CompletableFuture<Void> connect() {
            if (connected) {
                return CompletableFuture.completedFuture(null);
            }
            synchronized (this) {
                CompletableFuture<Void> attempt = connecting;
                if (attempt == null || attempt.isDone()) {
                    attempt =
                            template.execute(connection -> connection.ping())
                                    .next()
                                    .subscribeOn(Schedulers.fromExecutor(Blocking.POOL))
                                    .doOnSuccess(pong -> connected = true)
                                    .then()
                                    .toFuture();
                    connecting = attempt;
                }
                return attempt.copy();
            }
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

        private volatile boolean connected;

        /** The attempt to connect in progress, if any; guarded by this. */
        private @Nullable CompletableFuture<Void> connecting;

        Blocking(RedisOperations<String, String> redis) {
            this.redis = redis;
        }

        /**
         * Opens a connection with a {@code PING} on the pool, until one has succeeded; from then on
         * the client reconnects within the calls that need it.
         */
        @Override
        public CompletableFuture<Void> connect() {
            if (connected) {
                return CompletableFuture.completedFuture(null);
            }
            synchronized (this) {
                CompletableFuture<Void> attempt = connecting;
                if (attempt == null || attempt.isDone()) {
                    attempt =
                            CompletableFuture.runAsync(
                                    () -> {
                                        redis.execute(
                                                (RedisCallback<String>) RedisConnection::ping);
                                        connected = true;
                                    },
                                    POOL);
                    connecting = attempt;
                }
                return attempt.copy();
            }
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
