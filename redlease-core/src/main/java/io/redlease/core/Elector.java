package io.redlease.core;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisAccessor;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * Lease-based leader election on Redis with fencing tokens: one instance at a time holds the lease
 * for {@link ElectorConfig#name()} and leads; if it cannot renew in time it steps down and another
 * instance takes over.
 *
 * <p>Every term gets a fencing token greater than every earlier term's. Writes made through a
 * {@link Fencer} (or the {@code fence*} methods) are checked against the newest token inside Redis,
 * atomically with the write, so a paused or partitioned ex-leader cannot overwrite newer state.
 *
 * <p>What is guaranteed, and what is not:
 *
 * <ul>
 *   <li>At most one instance holds a valid lease at a time. An instance may still believe it leads
 *       for a moment after its lease lapsed (a pause, a partition): leases cannot rule out two
 *       leaders, fencing makes that window safe for the writes that go through it.
 *   <li>A leader steps down no later than the time to live after sending its last successful
 *       renewal, by its own clock; it does not wait for Redis to answer.
 *   <li>Tokens strictly increase as long as the Redis keys survive: a single Redis with {@code
 *       appendfsync always} and no eviction of the fence keys. Asynchronous replication (Sentinel,
 *       Cluster) can lose a token on failover.
 *   <li>Fencing protects only resources that check the token: Redis writes through the fencer, or
 *       other stores that compare {@link Fencer#token()} in a conditional write.
 * </ul>
 *
 * <p>Use: {@link #start(LeaderTask)} to contend in the background (or {@link #run(LeaderTask)} to
 * block), {@link #close()} to step down and release. The task runs on its own thread once per won
 * term; with no task, the elector just holds leadership and other code acts through {@link
 * #fencer()} (token-driven style). No thread starts before {@code start}; the loops of all electors
 * share a few threads. Interoperable with the Go library {@code redlease} on the same name: same
 * keys, same script semantics.
 */
public final class Elector implements AutoCloseable {

    /** Tokens must stay below 2^53 so Lua's double comparison is exact. */
    static final long MAX_TOKEN = 1L << 53;

    private static final RedisSerializer<String> STRING = RedisSerializer.string();

    private final RedisOperations<String, String> redis;

    private final ElectorConfig config;

    private final Observer observer;

    private final ElectorRuntime runtime;

    private final List<String> leaseKeys;

    private final List<String> acquireKeys;

    private final List<String> renewKeys;

    private final String markKey;

    private final String ttlMillis;

    private final String releaseChannel;

    private final @Nullable RedisConnectionFactory connectionFactory;

    private final AtomicReference<@Nullable Campaign> campaign = new AtomicReference<>();

    private final Object calls = new Object();

    /** Calls running inside a term ({@link Term#execute}); guarded by {@link #calls}. */
    private int callsInFlight;

    /** Completed once stopping may proceed: no call in flight; guarded by {@link #calls}. */
    private @Nullable CompletableFuture<Void> drained;

    /** The failure of the loop's last round trip, or null when it succeeded. */
    private volatile @Nullable Throwable redisFailure;

    private volatile @Nullable Term current;

    private final Map<String, RedisScript<Long>> evalScripts = new ConcurrentHashMap<>();

    /**
     * Creates an elector over the given Redis operations; nothing runs until {@link #start}.
     *
     * @param redis the Redis operations; keys must serialize as plain UTF-8 strings, as with a
     *     {@link StringRedisTemplate}. Arguments and replies bypass its value serializer.
     * @param config the validated configuration
     * @throws IllegalArgumentException if an argument is null or the key serializer does not write
     *     plain strings
     */
    public Elector(RedisOperations<String, String> redis, ElectorConfig config) {
        this(redis, config, ElectorRuntime.shared());
    }

    /**
     * Creates an elector over a new {@link StringRedisTemplate} on the given connection factory.
     *
     * @param connectionFactory the Redis connection factory
     * @param config the validated configuration
     */
    public Elector(RedisConnectionFactory connectionFactory, ElectorConfig config) {
        this(stringTemplate(connectionFactory), config);
    }

    Elector(
            @Nullable RedisOperations<String, String> redis,
            @Nullable ElectorConfig config,
            ElectorRuntime runtime) {
        if (redis == null) {
            throw new IllegalArgumentException("redlease: nil client");
        }
        if (config == null) {
            throw new IllegalArgumentException("redlease: config must not be null");
        }
        requirePlainKeys(redis);
        this.connectionFactory =
                redis instanceof RedisAccessor accessor ? accessor.getConnectionFactory() : null;
        if (isCluster(connectionFactory) && !hasHashTag(config.name())) {
            throw new InvalidElectorConfigException(
                    InvalidElectorConfigException.Setting.NAME,
                    "redlease: on Redis Cluster the name must contain a hash tag so that all its"
                            + " keys share one slot, e.g. '{"
                            + config.name()
                            + "}'; got '"
                            + config.name()
                            + "'");
        }
        if (config.replicaAcknowledgements() > 0 && connectionFactory == null) {
            throw new InvalidElectorConfigException(
                    InvalidElectorConfigException.Setting.REPLICA_ACKNOWLEDGEMENT,
                    "redlease: replica acknowledgement needs a RedisTemplate (its connection factory"
                            + " opens the dedicated connection WAIT runs on)");
        }
        this.redis = redis;
        this.config = config;
        this.observer = Observer.composite(config.observers());
        this.runtime = runtime;
        String name = config.name();
        this.leaseKeys = List.of(name + ":leader");
        this.markKey = name + ":fence:applied";
        this.acquireKeys = List.of(name + ":leader", name + ":fence", markKey);
        this.renewKeys = List.of(name + ":leader", markKey);
        this.ttlMillis = Long.toString(Math.max(config.ttl().toMillis(), 1));
        this.releaseChannel = releaseChannel(name);
    }

    /** Returns whether the name contains a Redis Cluster hash tag: "{", one or more chars, "}". */
    static boolean hasHashTag(String name) {
        int open = name.indexOf('{');
        return open >= 0 && name.indexOf('}', open + 1) > open + 1;
    }

    private static boolean isCluster(@Nullable RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
    }

    /** Returns the Pub/Sub channel on which a release of the named election is announced. */
    static String releaseChannel(String name) {
        return name + ":released";
    }

    /** Returns the election name. */
    public String name() {
        return config.name();
    }

    /** Returns this instance's id, as written into the lease. */
    public String instanceId() {
        return config.instanceId();
    }

    /** Returns the configuration. */
    public ElectorConfig config() {
        return config;
    }

    /**
     * Returns the current term's token, or empty when not leading. Acting on it is safe through a
     * fenced write: a token that went stale meanwhile is refused.
     */
    public OptionalLong token() {
        Term term = current;
        return term == null ? OptionalLong.empty() : OptionalLong.of(term.token());
    }

    /** Returns a fencer for the current term, or empty when not leading. */
    public Optional<Fencer> fencer() {
        Term term = current;
        return term == null ? Optional.empty() : Optional.of(term.fencer());
    }

    /** Returns the current term, or empty when not leading. */
    public Optional<Term> term() {
        return Optional.ofNullable(current);
    }

    /**
     * Returns whether this instance currently leads. Advisory only (for display and metrics):
     * leadership can end the moment after it returns, so never gate a write on it; write through a
     * fencer instead.
     */
    public boolean isLeader() {
        return current != null;
    }

    /** Returns whether the elector has been started and not yet stopped. */
    public boolean isRunning() {
        return campaign.get() != null;
    }

    /**
     * Returns the failure of the elector's last round trip to Redis (acquire, renewal or release),
     * or empty when it succeeded or the elector is not running. Useful for health checks: a
     * follower that reaches Redis is healthy, one that cannot is not.
     */
    public Optional<Throwable> redisFailure() {
        return isRunning() ? Optional.ofNullable(redisFailure) : Optional.empty();
    }

    /**
     * Reads who holds the lease now and for how long, with one read-only round trip on the calling
     * thread.
     *
     * @return the holder, or empty when the lease is free
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    public Optional<LeaseHolder> holder() {
        List<Object> reply = redis.execute(Scripts.HOLDER, STRING, ListReply.INSTANCE, leaseKeys);
        if (reply == null || reply.size() != 2 || reply.get(0) == null) {
            return Optional.empty();
        }
        long pttl = asLong(reply.get(1));
        return Optional.of(
                new LeaseHolder(
                        String.valueOf(reply.get(0)), pttl >= 0 ? Duration.ofMillis(pttl) : null));
    }

    /**
     * Returns a fencer for an explicit token, for the token-driven style. The token is not checked
     * against the current term; it should come from this election.
     *
     * @throws IllegalArgumentException if the token is 2^53 or more
     */
    public Fencer fencer(long token) {
        checkToken(token);
        return new Fencer(this, token);
    }

    /**
     * Starts contending in the background; with a task, runs it on its own thread for every won
     * term. Returns at once.
     *
     * @param task the leader task, or null to just hold leadership (token-driven style)
     * @throws IllegalStateException if the elector is already running
     */
    public void start(@Nullable LeaderTask task) {
        begin(task).start();
    }

    /** Starts contending in the background without a task (token-driven style). */
    public void start() {
        start(null);
    }

    /**
     * Contends and leads until the calling thread is interrupted or {@link #close()} is called,
     * then steps down gracefully and returns. On interruption the interrupt status is restored.
     *
     * @param task the leader task, or null to just hold leadership
     * @throws IllegalStateException if the elector is already running
     */
    public void run(@Nullable LeaderTask task) {
        Campaign run = begin(task);
        if (Thread.currentThread().isInterrupted()) {
            runEnded(run);
            return;
        }
        run.start();
        try {
            run.done().get();
        } catch (InterruptedException ex) {
            run.requestStop();
            awaitUninterruptibly(run.done());
            Thread.currentThread().interrupt();
        } catch (ExecutionException ex) {
            throw new IllegalStateException("redlease: run failed", ex.getCause());
        }
    }

    /**
     * Ends the current term voluntarily: the task is interrupted, the lease released, and the
     * elector contends again (it may win again, with a new token). No effect when not leading.
     */
    public void resign() {
        Campaign run = campaign.get();
        Term term = current;
        if (run != null && term != null) {
            run.resign(term);
        }
    }

    /**
     * Stops contending and steps down gracefully: admits no new calls into the term ({@code
     * LeaderOnly} methods are skipped), waits for those in flight, then ends the term, waits for
     * the task to return, releases the lease and notifies the observers. Returns when that is done;
     * returns at once when called from the elector's own task, a call in its term or an observer,
     * or when not running.
     */
    public void stop() {
        CompletableFuture<Void> stopped = stopAsync();
        if (!ElectorRuntime.onLoopThread() && !onOwnTaskThread()) {
            awaitUninterruptibly(stopped);
        }
    }

    /**
     * Stops like {@link #stop()} but waits at most the given time.
     *
     * @return whether the elector has stopped
     */
    public boolean stop(Duration timeout) throws InterruptedException {
        try {
            stopAsync().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException ex) {
            return false;
        } catch (ExecutionException ex) {
            return true;
        }
    }

    /**
     * Asks the elector to stop and returns a future completed once it has stepped down.
     *
     * @return a future completed when the run has ended (already completed when not running)
     */
    public CompletableFuture<Void> stopAsync() {
        Campaign run = campaign.get();
        if (run == null) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> drain;
        synchronized (calls) {
            if (drained == null) {
                drained = new CompletableFuture<>();
                if (callsInFlight == 0) {
                    drained.complete(null);
                }
            }
            drain = drained;
        }
        return drain.thenCompose(
                ignored -> {
                    run.requestStop();
                    return run.done();
                });
    }

    /** Stops the elector; see {@link #stop()}. The elector may be started again afterwards. */
    @Override
    public void close() {
        stop();
    }

    /** Wakes a sleeping follower so it tries to acquire now. */
    void wake() {
        Campaign run = campaign.get();
        if (run != null && current == null) {
            run.wake();
        }
    }

    // Fenced writes.

    /**
     * Sets {@code key} to {@code value} if {@code token} is current, atomically with the check.
     *
     * @return true if applied; false if the token is stale (below 1, below the newest elected term
     *     or the newest applied write)
     * @throws IllegalArgumentException if an argument is null or the token is 2^53 or more
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    public boolean fenceSet(long token, String key, String value) {
        return fence(
                Scripts.FENCE_SET, token, keys(required(key, "key")), required(value, "value"));
    }

    /**
     * Sets {@code field} of hash {@code key} to {@code value} if {@code token} is current,
     * atomically with the check.
     *
     * @return true if applied; false if the token is stale
     * @throws IllegalArgumentException if an argument is null or the token is 2^53 or more
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    public boolean fenceHSet(long token, String key, String field, String value) {
        return fence(
                Scripts.FENCE_HSET,
                token,
                keys(required(key, "key")),
                required(field, "field"),
                required(value, "value"));
    }

    /**
     * Runs a Lua {@code body} if {@code token} is current, atomically with the check.
     *
     * <p>{@code KEYS[1]} and {@code ARGV[1]} are reserved for the fence: the body addresses its own
     * keys as {@code KEYS[2..]} and its arguments as {@code ARGV[2..]}. The body runs inside a Lua
     * function: a {@code return} ends the body only, and the write counts as applied. A body that
     * raises an error (for example {@code WRONGTYPE}) surfaces it and does not advance the fence;
     * writes it made before the error are not rolled back (Redis scripts do not roll back). Bodies
     * are cached per elector, at most {@value TooManyEvalBodiesException#CAP}: keep them constant
     * and pass variable data as keys and arguments. On Redis Cluster every key must share the
     * election name's hash tag.
     *
     * @param keys the body's keys (may be empty)
     * @param args the body's arguments
     * @return true if applied; false if the token is stale
     * @throws TooManyEvalBodiesException before any Redis call, when the body is new and the cache
     *     is full
     * @throws IllegalArgumentException if an argument is null or blank, or the token is 2^53 or
     *     more
     * @throws org.springframework.dao.DataAccessException if Redis fails or the body errors
     */
    public boolean fenceEval(long token, String body, @Nullable List<String> keys, String... args) {
        if (body == null || body.isBlank()) {
            throw new IllegalArgumentException("redlease: body must not be null or blank");
        }
        List<String> allKeys = new ArrayList<>((keys == null ? 0 : keys.size()) + 1);
        allKeys.add(markKey);
        if (keys != null) {
            for (String key : keys) {
                allKeys.add(required(key, "keys element"));
            }
        }
        if (args == null) {
            throw new IllegalArgumentException("redlease: args must not be null");
        }
        for (String arg : args) {
            required(arg, "args element");
        }
        checkToken(token);
        return fence(evalScript(body), token, allKeys, args);
    }

    private RedisScript<Long> evalScript(String body) {
        RedisScript<Long> script = evalScripts.get(body);
        if (script != null) {
            return script;
        }
        synchronized (evalScripts) {
            script = evalScripts.get(body);
            if (script == null) {
                if (evalScripts.size() >= TooManyEvalBodiesException.CAP) {
                    throw new TooManyEvalBodiesException();
                }
                script = Scripts.fenced(body);
                evalScripts.put(body, script);
            }
            return script;
        }
    }

    private boolean fence(RedisScript<Long> script, long token, List<String> keys, String... args) {
        checkToken(token);
        boolean applied = false;
        if (token >= 1) {
            Object[] argv = new Object[args.length + 1];
            argv[0] = Long.toString(token);
            System.arraycopy(args, 0, argv, 1, args.length);
            Long reply = redis.execute(script, STRING, LongReply.INSTANCE, keys, argv);
            applied = reply != null && reply == 1L;
        }
        observer.onFencedWrite(applied);
        return applied;
    }

    private List<String> keys(String key) {
        return List.of(markKey, key);
    }

    // Round trips of the run loop; package-private so tests can drive them one by one.

    AcquireReply acquireOnce() {
        List<Object> reply =
                redis.execute(
                        Scripts.ACQUIRE,
                        STRING,
                        ListReply.INSTANCE,
                        acquireKeys,
                        config.instanceId(),
                        ttlMillis);
        if (reply == null || reply.size() != 2) {
            throw new IllegalStateException("redlease: unexpected acquire reply " + reply);
        }
        return new AcquireReply(asLong(reply.get(0)), asLong(reply.get(1)));
    }

    boolean renewOnce(long token) {
        Long reply =
                redis.execute(
                        Scripts.RENEW,
                        STRING,
                        LongReply.INSTANCE,
                        renewKeys,
                        config.instanceId(),
                        ttlMillis,
                        Long.toString(token));
        return reply != null && reply == 1L;
    }

    boolean releaseOnce() {
        Long reply =
                redis.execute(
                        Scripts.RELEASE,
                        STRING,
                        LongReply.INSTANCE,
                        leaseKeys,
                        config.instanceId(),
                        releaseChannel);
        return reply != null && reply == 1L;
    }

    /**
     * Renews the lease on a dedicated connection and waits until the configured number of replicas
     * have everything written before it, including the acquire; returns how many did.
     */
    long confirmReplicas(long token) {
        RedisConnectionFactory factory = connectionFactory;
        if (factory == null) {
            throw new IllegalStateException(
                    "redlease: replica acknowledgement needs a RedisTemplate");
        }
        byte[][] renewArgs = {
            bytes(renewKeys.get(0)),
            bytes(renewKeys.get(1)),
            bytes(config.instanceId()),
            bytes(ttlMillis),
            bytes(Long.toString(token))
        };
        byte[][] waitArgs = {
            bytes(Integer.toString(config.replicaAcknowledgements())),
            bytes(Long.toString(config.replicaAcknowledgementTimeout().toMillis()))
        };
        List<Object> replies;
        try (RedisConnection connection = factory.getConnection()) {
            // A pipeline runs on a connection of its own, so WAIT blocks no shared connection and
            // counts exactly the writes before it on this one: the renewal, and so the acquire.
            connection.openPipeline();
            connection
                    .scriptingCommands()
                    .eval(
                            bytes(Scripts.RENEW.getScriptAsString()),
                            ReturnType.INTEGER,
                            renewKeys.size(),
                            renewArgs);
            if (connection instanceof LettuceConnection lettuce) {
                lettuce.execute("WAIT", new IntegerOutput<>(ByteArrayCodec.INSTANCE), waitArgs);
            } else {
                connection.execute("WAIT", waitArgs);
            }
            replies = connection.closePipeline();
        }
        if (replies.size() != 2 || asLong(replies.get(0)) != 1L) {
            return -1;
        }
        return asLong(replies.get(1));
    }

    String ttlMillis() {
        return ttlMillis;
    }

    @Nullable RedisConnectionFactory connectionFactory() {
        return connectionFactory;
    }

    void recordRoundTrip(@Nullable Throwable failure) {
        redisFailure = failure;
    }

    Observer observer() {
        return observer;
    }

    RedisOperations<String, String> redis() {
        return redis;
    }

    // Run bookkeeping, called by the campaign on its loop thread.

    private Campaign begin(@Nullable LeaderTask task) {
        Campaign run = new Campaign(this, task, runtime);
        if (!campaign.compareAndSet(null, run)) {
            throw new IllegalStateException(
                    "redlease: Run called concurrently on the same Elector; use one Elector per"
                            + " Run");
        }
        return run;
    }

    void publish(Term term) {
        current = term;
    }

    void unpublish(Term term) {
        if (current == term) {
            current = null;
        }
    }

    void runEnded(Campaign run) {
        synchronized (calls) {
            drained = null;
        }
        campaign.compareAndSet(run, null);
    }

    /** Admits a call into a term, unless the elector is draining calls to stop. */
    boolean enterCall() {
        synchronized (calls) {
            if (drained != null) {
                return false;
            }
            callsInFlight++;
            return true;
        }
    }

    void exitCall() {
        CompletableFuture<Void> drain;
        synchronized (calls) {
            callsInFlight--;
            drain = callsInFlight == 0 ? drained : null;
        }
        if (drain != null) {
            drain.complete(null);
        }
    }

    /** Whether the calling thread works for a term of this elector (its task, a bound call). */
    private boolean onOwnTaskThread() {
        return BoundTerms.of(this) != null;
    }

    @Override
    public String toString() {
        return "Elector[" + name() + ", instanceId=" + instanceId() + "]";
    }

    // Helpers.

    static void checkToken(long token) {
        if (token >= MAX_TOKEN) {
            throw new IllegalArgumentException(
                    "redlease: token must be below 2^53 (" + MAX_TOKEN + "), got " + token);
        }
    }

    private static <T> T required(@Nullable T value, String argument) {
        if (value == null) {
            throw new IllegalArgumentException("redlease: " + argument + " must not be null");
        }
        return value;
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static long asLong(@Nullable Object value) {
        if (value instanceof Long number) {
            return number;
        }
        if (value instanceof byte[] bytes) {
            return Long.parseLong(new String(bytes, StandardCharsets.UTF_8));
        }
        return Long.parseLong(String.valueOf(value));
    }

    private static void awaitUninterruptibly(CompletableFuture<Void> future) {
        boolean interrupted = false;
        while (true) {
            try {
                future.get();
                break;
            } catch (InterruptedException ex) {
                interrupted = true;
            } catch (ExecutionException ex) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @SuppressWarnings("unchecked")
    private static void requirePlainKeys(RedisOperations<String, String> redis) {
        RedisSerializer<Object> serializer = (RedisSerializer<Object>) redis.getKeySerializer();
        byte[] probe = null;
        try {
            probe = serializer == null ? null : serializer.serialize("redlease");
        } catch (RuntimeException ex) {
            // Not a String serializer: rejected below.
        }
        if (!Arrays.equals(probe, "redlease".getBytes(StandardCharsets.UTF_8))) {
            throw new IllegalArgumentException(
                    "redlease: the RedisOperations' key serializer must write String keys as plain"
                            + " UTF-8; use a StringRedisTemplate");
        }
    }

    private static StringRedisTemplate stringTemplate(RedisConnectionFactory connectionFactory) {
        if (connectionFactory == null) {
            throw new IllegalArgumentException("redlease: nil client");
        }
        StringRedisTemplate template = new StringRedisTemplate(connectionFactory);
        template.afterPropertiesSet();
        return template;
    }

    /**
     * Who holds an election's lease, as read from Redis.
     *
     * @param instanceId the holder's instance id
     * @param remaining how long the lease has left, or null when it has no expiry
     */
    public record LeaseHolder(String instanceId, @Nullable Duration remaining) {}

    /** The outcome of one acquire attempt. */
    record AcquireReply(long token, long holderTtlMillis) {}

    /** Keeps an integer reply as it is. */
    private enum LongReply implements RedisSerializer<Long> {
        INSTANCE;

        @Override
        public byte[] serialize(@Nullable Long value) {
            return value == null ? new byte[0] : value.toString().getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public @Nullable Long deserialize(byte @Nullable [] bytes) {
            return bytes == null ? null : Long.valueOf(new String(bytes, StandardCharsets.UTF_8));
        }
    }

    /** Keeps the elements of an array reply as they are; bulk strings decode as UTF-8. */
    @SuppressWarnings("rawtypes")
    private enum ListReply implements RedisSerializer {
        INSTANCE;

        @Override
        public byte[] serialize(@Nullable Object value) {
            throw new UnsupportedOperationException();
        }

        @Override
        public @Nullable Object deserialize(byte @Nullable [] bytes) {
            return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
