package io.redlease.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveRedisOperations;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.RedisAccessor;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.util.context.ContextView;

/**
 * Lease-based leader election on Redis with fencing tokens: one instance at a time holds the lease
 * for {@link ElectorConfig#name()} and leads; if it cannot renew in time it steps down and another
 * instance takes over.
 *
 * <p>Every term gets a fencing token greater than every earlier term's. Writes made through a
 * {@link Fencer} are checked against the newest token inside Redis, atomically with the write, so a
 * paused or partitioned ex-leader cannot overwrite newer state.
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
 * #fencer()} (token-driven style). No thread starts before {@code start}.
 *
 * <p>Where code runs: the loops of all electors share a few engine threads that run only the state
 * machine and Redis I/O (non-blocking with Lettuce; a small bounded pool with a blocking-only
 * connection factory such as Jedis). The steps on a graceful hand-off's path (a stop with nothing
 * in flight, a release heard, the reply of the acquire sent on hearing it) run at once on the
 * thread that brings them while the election's loop is idle, one step at a time; they never wait.
 * Observer callbacks of one elector run in order on their own serial lane over {@link
 * ElectorConfig#callbackExecutor()}; the leader task runs on a thread of its own. Stopping is
 * bounded by {@link ElectorConfig#drainTimeout()}. Interoperable with the Go library {@code
 * redlease} on the same name: same keys, same script semantics.
 */
public final class Elector implements AutoCloseable {

    private final ElectorConfig config;

    private final Observer observer;

    private final LeaseProtocol protocol;

    private final FencedWrites writes;

    private final Lane lane;

    private final @Nullable RedisConnectionFactory connectionFactory;

    private volatile @Nullable ReactiveRedisOperations<String, String> reactiveRedis;

    private final RunControl runs;

    private final LeaderInfoStore leaderInfo;

    private final Candidacy candidacy;

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
        LeaseProtocol.requirePlainKeys(redis);
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
        if (!isCluster(connectionFactory)) {
            HashTagHint.forName(config.name());
        }
        if (config.replicaAcknowledgements() > 0 && connectionFactory == null) {
            throw new InvalidElectorConfigException(
                    InvalidElectorConfigException.Setting.REPLICA_ACKNOWLEDGEMENT,
                    "redlease: replica acknowledgement needs a RedisTemplate (its connection factory"
                            + " opens the dedicated connection WAIT runs on)");
        }
        this.config = config;
        this.leaderInfo = new LeaderInfoStore(redis, config);
        this.protocol = new LeaseProtocol(redis, connectionFactory, config);
        this.writes = new FencedWrites(config, protocol.runner());
        protocol.acquireMetadata(leaderInfo::acquireFields);
        this.candidacy = new Candidacy(redis, protocol, this);
        this.observer =
                Observer.composite(
                        LeaderInfoStore.first(List.of(leaderInfo, candidacy), config.observers()));
        this.lane =
                new Lane(
                        config.name(),
                        config.callbackExecutor().orElse(ElectorRuntime.callbacks()));
        this.runs = new RunControl(this, config, lane, runtime);
    }

    /** Returns whether the name contains a Redis Cluster hash tag: "{", one or more chars, "}". */
    static boolean hasHashTag(String name) {
        int open = name.indexOf('{');
        return open >= 0 && name.indexOf('}', open + 1) > open + 1;
    }

    private static boolean isCluster(@Nullable RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
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
     * Returns the current term's token, or empty when not leading: while no term is {@linkplain
     * Term#isActive() active} (one past its local deadline is not). Acting on it is safe through a
     * fenced write: a token that went stale meanwhile is refused.
     */
    public OptionalLong token() {
        Term term = active();
        return term == null ? OptionalLong.empty() : OptionalLong.of(term.token());
    }

    /**
     * Returns a fencer for the current term, or empty when not leading (no term is {@linkplain
     * Term#isActive() active}).
     */
    public Optional<Fencer> fencer() {
        Term term = active();
        return term == null ? Optional.empty() : Optional.of(term.fencer());
    }

    /**
     * Returns the current term, or empty when not leading: while no term is {@linkplain
     * Term#isActive() active}, neither ended nor past its local deadline.
     */
    public Optional<Term> term() {
        return Optional.ofNullable(active());
    }

    /** Returns the run's current term if it is active, else null. */
    private @Nullable Term active() {
        Term term = runs.current();
        return term != null && term.isActive() ? term : null;
    }

    /**
     * Returns the term of this election that the calling thread works for: bound by {@link
     * Term#execute} or a {@code LeaderOnly} call, or carried by work started in it (through context
     * propagation), even if it has ended; empty elsewhere.
     */
    public Optional<Term> boundTerm() {
        return Optional.ofNullable(BoundTerms.of(this));
    }

    /**
     * Returns the term of this election that a reactive subscription's context carries (work of a
     * {@code LeaderOnly} method returning a publisher, {@link Term#executeReactive}), if any.
     */
    public Optional<Term> termIn(ContextView context) {
        return Optional.ofNullable(BoundTerms.of(this, context));
    }

    /**
     * Returns whether this instance currently leads: whether it has a term that is {@linkplain
     * Term#isActive() active}, neither ended nor past its local deadline. Advisory only (for
     * display and metrics): leadership can end the moment after it returns, so never gate a write
     * on it; write through a fencer instead.
     */
    public boolean isLeader() {
        return active() != null;
    }

    /**
     * Returns whether this instance sees a valid lease held by anyone, itself included, from its
     * own round trips and without one: true while it leads, and while a follower's last acquire
     * attempt found another instance's lease that has not lapsed since (counted from the attempt's
     * send, plus one acquire timeout while the next look is on its way). False when stopped, when
     * the last attempt failed or found the lease free. Advisory, like {@link #isLeader()}: for
     * metrics that tell whether an election has a leader even when it is not one of this library's
     * instances.
     */
    public boolean leaseHeld() {
        return runs.leaseHeld();
    }

    /** Returns whether the elector has been started and not yet stopped. */
    public boolean isRunning() {
        return runs.running();
    }

    /**
     * Returns the failure of the elector's last round trip to Redis (acquire, renewal or release),
     * or empty when it succeeded or the elector is not running. Useful for health checks: a
     * follower that reaches Redis is healthy, one that cannot is not.
     */
    public Optional<Throwable> redisFailure() {
        return isRunning() ? Optional.ofNullable(runs.redisFailure()) : Optional.empty();
    }

    /**
     * Returns why releases of this election are not announced to this instance right now, or empty
     * while they are. While they are, a follower takes over at once when the leader releases
     * gracefully; otherwise it takes over at its next look at the lease. The reason is one line:
     * switched off, not used on Redis Cluster, not running, subscribing, a failed subscription with
     * its cause (retried until it succeeds), or a lost subscription connection being restored.
     *
     * @return the reason, or empty while notifications are heard
     */
    public Optional<String> notificationsOff() {
        return Optional.ofNullable(runs.notificationsOff());
    }

    /**
     * Returns whether this instance leads past its local deadline: its last successful renewal was
     * sent more than the time to live ago and the term has not ended yet. The watchdog ends such a
     * term within moments; a health check may report it meanwhile.
     */
    public boolean isPastDeadline() {
        Term term = runs.current();
        return term != null && term.pastDeadline();
    }

    /**
     * Reads who holds the lease now and for how long, with one read-only round trip on the calling
     * thread.
     *
     * @return the holder, or empty when the lease is free
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    public Optional<LeaseHolder> holder() {
        return protocol.holder();
    }

    /**
     * Publishes what other instances learn about this one while it leads ({@link #leaderInfo()}):
     * kept beside the lease in {@code <name>:leader:info} with the lease's lifetime, written by the
     * acquire that wins a term (so it is readable as soon as the lease is) and refreshed after
     * every renewal. Takes effect at once while leading; null stops publishing. Off until called.
     *
     * @param metadata what to publish, or null for nothing
     */
    public void advertise(@Nullable LeaderMetadata metadata) {
        leaderInfo.advertise(metadata);
    }

    /** Returns what this instance publishes while it leads, if anything. */
    public Optional<LeaderMetadata> advertised() {
        return Optional.ofNullable(leaderInfo.advertised());
    }

    /**
     * Reads who holds the lease now and what it published about itself ({@link
     * #advertise(LeaderMetadata)}), with one read-only round trip on the calling thread. Metadata
     * is returned only when the current holder wrote it in its current term, never an earlier
     * leader's or an earlier term's (an instance restarted with its id takes its own lease over).
     *
     * @return the holder and its metadata, or empty when the lease is free
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    public Optional<LeaderInfo> leaderInfo() {
        return leaderInfo.read();
    }

    /**
     * Sets how strongly this instance wants to lead ({@link Preference}): it heartbeats its rank
     * and readiness beside the lease; while it leads it hands over, once per term, to a live and
     * ready candidate that ranks strictly higher; while the lease is free it does not take it from
     * such a candidate. Null turns preference off (the default): the instance contends as usual.
     *
     * @param preference the rank, or null for none
     * @param ready whether this instance is ready to lead now (for example Spring Boot's readiness
     *     state); null means always. A supplier that throws counts as not ready.
     */
    public void prefer(@Nullable Preference preference, @Nullable BooleanSupplier ready) {
        candidacy.prefer(preference, ready);
    }

    /** Returns this instance's preference, if any. */
    public Optional<Preference> preference() {
        return Optional.ofNullable(candidacy.preference());
    }

    /**
     * Returns a fencer for an explicit token, for the token-driven style. The token is not checked
     * against the current term; it should come from this election. When it is the token of this
     * instance's last term (current or ended) or of the term bound to the calling thread, the
     * fencer is that term's: its writes are bounded by the term's local deadline, and refused
     * without a call past it. Otherwise each write waits at most the time to live for its reply
     * (the longest a term can last without a renewal).
     *
     * @throws IllegalArgumentException if the token is 2^53 or more
     */
    public Fencer fencer(long token) {
        LeaseProtocol.checkToken(token);
        Term term = termOf(token);
        return term != null ? term.fencer() : new Fencer(writes, observer, name(), token, null);
    }

    /**
     * Returns a reactive fencer for an explicit token, over a reactive connection of the elector's
     * connection factory (Lettuce's is one); bounded as {@link #fencer(long)} says.
     *
     * @throws IllegalArgumentException if the token is 2^53 or more
     * @throws IllegalStateException if the elector was built without a reactive connection factory
     */
    public ReactiveFencer reactiveFencer(long token) {
        LeaseProtocol.checkToken(token);
        return new ReactiveFencer(writes, reactiveRedis(), observer, name(), token, termOf(token));
    }

    /** Returns a reactive fencer of one of this elector's terms. */
    ReactiveFencer reactiveFencer(Term term) {
        return new ReactiveFencer(writes, reactiveRedis(), observer, name(), term.token(), term);
    }

    /**
     * Returns this instance's term with the token: bound to the thread, or the last one led (even
     * if it has ended; an older term's token is refused at Redis, which the later term's acquire
     * fenced off); else null.
     */
    private @Nullable Term termOf(long token) {
        Term bound = BoundTerms.of(this);
        if (bound != null && bound.token() == token) {
            return bound;
        }
        Term last = runs.last();
        return last != null && last.token() == token ? last : null;
    }

    private ReactiveRedisOperations<String, String> reactiveRedis() {
        ReactiveRedisOperations<String, String> reactive = reactiveRedis;
        if (reactive == null) {
            if (!(connectionFactory instanceof ReactiveRedisConnectionFactory factory)) {
                throw new IllegalStateException(
                        "redlease: a reactive fencer of '"
                                + name()
                                + "' needs a reactive Redis connection factory (Lettuce's is one);"
                                + " build the elector from a LettuceConnectionFactory");
            }
            reactive = new ReactiveStringRedisTemplate(factory);
            reactiveRedis = reactive;
        }
        return reactive;
    }

    /**
     * Starts contending in the background; with a task, runs it on its own thread for every won
     * term. Returns at once.
     *
     * @param task the leader task, or null to just hold leadership (token-driven style)
     * @throws IllegalStateException if the elector is already running
     */
    public void start(@Nullable LeaderTask task) {
        runs.start(task);
    }

    /** Starts contending in the background without a task (token-driven style). */
    public void start() {
        start(null);
    }

    /**
     * Returns the first outcome of the current run, for a caller that waits after {@link #start}
     * (an application's startup, so that a lone instance leads before its scheduled jobs first
     * fire). The future completes once the run has opened its connection and made its first acquire
     * attempt, within the {@linkplain ElectorConfig#connectTimeout() connect timeout} plus the time
     * to live (and the acquire timeout, with replica acknowledgement): with true when it won a term
     * ({@link #isLeader()} is true by then, unless the term has already ended), false when another
     * instance holds the lease, the connection or the attempt failed (the run backs off and tries
     * again), or the run stopped. A follower's false waits until its release subscription is in
     * place (so a release after it is heard), has failed, or the connect timeout since {@link
     * #start} has passed. Completed with false when not running. Completing the returned future has
     * no effect on the run. Its dependents run on the engine's callback pool (or on the calling
     * thread when it has completed already), never on an election loop or a Redis client's thread.
     */
    public CompletableFuture<Boolean> firstOutcome() {
        return runs.firstOutcome();
    }

    /**
     * Contends and leads until the calling thread is interrupted or {@link #close()} is called,
     * then steps down gracefully and returns. On interruption the interrupt status is restored.
     *
     * @param task the leader task, or null to just hold leadership
     * @throws IllegalStateException if the elector is already running
     */
    public void run(@Nullable LeaderTask task) {
        runs.run(task);
    }

    /**
     * Ends the current term voluntarily: the task is interrupted, the lease released, and the
     * elector contends again (it may win again, with a new token). No effect when not leading.
     */
    public void resign() {
        runs.resign();
    }

    /**
     * Stops contending and steps down, waiting at most the {@linkplain ElectorConfig#drainTimeout()
     * drain timeout} for work in flight: admits no new calls into the term ({@code @LeaderOnly}
     * methods are skipped), waits for those in flight up to the drain timeout, then ends the term
     * (interrupting the task and the calls still running, each named in a WARN), waits for the task
     * to return within what is left of the drain timeout, releases the lease and notifies the
     * observers. A leader with a release subscription closes it 20 ms after its release, not
     * alongside it, so that the unsubscribe does not compete with the successor's takeover for the
     * CPU. Returns when all that is done (a stop right after another waits for the same); returns
     * at once when called from the elector's own task, a call in its term or an observer callback,
     * or when not running.
     */
    public void stop() {
        try {
            stop(config.drainTimeout());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops like {@link #stop()}, with the given drain timeout instead of the configured one.
     *
     * @param drainTimeout how long calls in flight may run on before they are interrupted
     * @return whether the elector has stopped; false only when called from its own task, a call in
     *     its term or an observer callback, where it cannot wait
     */
    public boolean stop(Duration drainTimeout) throws InterruptedException {
        return runs.stop(drainTimeout);
    }

    /**
     * Asks the elector to stop with the configured drain timeout; see {@link #stop()}.
     *
     * @return a future completed when the run has ended (when not running, once the last run's
     *     subscription is closed); dependents attached before it completes run on the engine's
     *     callback pool, never on a loop or a Redis client thread
     */
    public CompletableFuture<Void> stopAsync() {
        return stopAsync(config.drainTimeout());
    }

    /**
     * Asks the elector to stop with the given drain timeout; see {@link #stop()}.
     *
     * @return a future completed when the run has ended (when not running, once the last run's
     *     subscription is closed); dependents attached before it completes run on the engine's
     *     callback pool, never on a loop or a Redis client thread
     */
    public CompletableFuture<Void> stopAsync(Duration drainTimeout) {
        return runs.stopAsyncForCaller(drainTimeout);
    }

    /**
     * Stops the elector; see {@link #stop()}. Never waits without bound. The elector may be started
     * again afterwards.
     */
    @Override
    public void close() {
        stop();
    }

    /** Returns whether the run follows, hears release announcements and sleeps until its look. */
    boolean idleFollower() {
        return runs.idleFollower();
    }

    /**
     * Returns whether no step of the run is running or handed to the loop thread (timers aside);
     * for tests.
     */
    boolean stepsIdle() {
        return runs.stepsIdle();
    }

    /** Returns the loop thread's executor of the current run, or null when not running. */
    @Nullable ScheduledExecutorService loop() {
        return runs.loop();
    }

    LeaseProtocol protocol() {
        return protocol;
    }

    FencedWrites fencedWrites() {
        return writes;
    }

    Lane lane() {
        return lane;
    }

    @Nullable RedisConnectionFactory connectionFactory() {
        return connectionFactory;
    }

    void recordRoundTrip(@Nullable Throwable failure) {
        runs.recordRoundTrip(failure);
    }

    void leaseSeen(boolean seen, long until) {
        runs.leaseSeen(seen, until);
    }

    Observer observer() {
        return observer;
    }

    // Run bookkeeping, called by the campaign on its loop thread.

    void publish(Term term) {
        runs.publish(term);
    }

    void unpublish(Term term) {
        runs.unpublish(term);
    }

    void runEnded(Campaign run) {
        runs.runEnded(run);
        // A stopped instance no longer contends, leader or follower: its candidacy must not keep
        // others from a free lease until it lapses. On the lane, after its last heartbeat.
        if (candidacy.preference() != null) {
            lane.submit("withdraw", candidacy::withdraw);
        }
    }

    @Override
    public String toString() {
        return "Elector[" + name() + ", instanceId=" + instanceId() + "]";
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
}
