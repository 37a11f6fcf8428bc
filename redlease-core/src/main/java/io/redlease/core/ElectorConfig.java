package io.redlease.core;

import io.redlease.core.InvalidElectorConfigException.Setting;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Immutable settings of one {@link Elector}: the election name, the lease timings, the instance id
 * and the observers.
 *
 * <p>Built with {@link #builder(String)}. {@link Builder#build()} applies the Go library's rules in
 * its order and with its messages: a zero duration means "use the default", a negative one is
 * rejected, the time to live is truncated to whole milliseconds and must be at least 100 ms, the
 * renew interval at most half of it, the acquire interval below it, and both intervals at least 1
 * ms. Defaults: time to live 5 s, renew interval a third of it, acquire interval half of it.
 *
 * <p>All instances that contend for one leadership use the same {@link #name()}. The Redis keys are
 * {@code <name>:leader}, {@code <name>:fence} and {@code <name>:fence:applied}; on Redis Cluster
 * the name must contain a hash tag such as {@code {report-builder}}.
 */
public final class ElectorConfig {

    /** Time to live of the lease when none is set: 5 seconds. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(5);

    static final long DEFAULT_DRAIN_TIMEOUT_SECONDS = 10;

    /** The drain timeout when none is set: how long stopping waits for work in flight. */
    public static final Duration DEFAULT_DRAIN_TIMEOUT =
            Duration.ofSeconds(DEFAULT_DRAIN_TIMEOUT_SECONDS);

    static final long DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;

    /**
     * The connect timeout when none is set: how long a run waits for its connection to Redis before
     * its first acquire (the default connect timeout of Lettuce, Spring Boot's Redis client).
     */
    public static final Duration DEFAULT_CONNECT_TIMEOUT =
            Duration.ofSeconds(DEFAULT_CONNECT_TIMEOUT_SECONDS);

    private final String name;

    private final Duration ttl;

    private final Duration renewInterval;

    private final Duration acquireInterval;

    private final String instanceId;

    private final List<Observer> observers;

    private final boolean leaseAwareScheduling;

    private final boolean releaseNotifications;

    private final int ackReplicas;

    private final Duration ackTimeout;

    private final LongSupplier clock;

    private final Duration drainTimeout;

    private final Duration connectTimeout;

    private final @Nullable Executor callbackExecutor;

    private final List<BeforeRelease> beforeRelease;

    private final List<String> fencedKeyPrefixes;

    private ElectorConfig(Builder builder, ConfigRules.Timings timings) {
        this.name = builder.name;
        this.ttl = timings.ttl();
        this.renewInterval = timings.renew();
        this.acquireInterval = timings.acquire();
        this.instanceId =
                builder.instanceId.isEmpty() ? InstanceIds.generate() : builder.instanceId;
        this.observers = List.copyOf(builder.observers);
        this.leaseAwareScheduling = builder.leaseAwareScheduling;
        this.releaseNotifications = builder.releaseNotifications;
        this.ackReplicas = builder.ackReplicas;
        this.ackTimeout = builder.ackTimeout;
        this.clock = builder.clock;
        this.drainTimeout = builder.drainTimeout;
        this.connectTimeout = builder.connectTimeout;
        this.callbackExecutor = builder.callbackExecutor;
        this.beforeRelease = List.copyOf(builder.beforeRelease);
        this.fencedKeyPrefixes = builder.fencedKeyPrefixes;
    }

    /**
     * Starts a builder for an election with the given name.
     *
     * @param name the election name shared by all contending instances; must not be empty
     * @return a new builder
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** Returns the election name, from which all Redis keys derive. */
    public String name() {
        return name;
    }

    /** Returns the lease time to live, in whole milliseconds. */
    public Duration ttl() {
        return ttl;
    }

    /** Returns how often the leader renews its lease. */
    public Duration renewInterval() {
        return renewInterval;
    }

    /** Returns how often a follower tries to acquire the lease. */
    public Duration acquireInterval() {
        return acquireInterval;
    }

    /** Returns the id this instance writes into the lease; unique among live instances. */
    public String instanceId() {
        return instanceId;
    }

    /** Returns the observers, in the order they are notified. */
    public List<Observer> observers() {
        return observers;
    }

    /**
     * Returns whether a follower schedules its next attempt for the moment the holder's lease
     * lapses, when that comes before the next acquire interval.
     */
    public boolean leaseAwareScheduling() {
        return leaseAwareScheduling;
    }

    /**
     * Returns whether a release is announced on Pub/Sub and followers listen for it, so a graceful
     * hand-off takes about one round trip instead of a poll interval.
     */
    public boolean releaseNotifications() {
        return releaseNotifications;
    }

    /**
     * Returns how many replicas must acknowledge a won term before it starts; 0 (the default) means
     * no acknowledgement is awaited.
     */
    public int replicaAcknowledgements() {
        return ackReplicas;
    }

    /** Returns how long to wait for the replicas to acknowledge a won term. */
    public Duration replicaAcknowledgementTimeout() {
        return ackTimeout;
    }

    /**
     * Returns how long an acquire attempt may take: min(acquire interval, ttl - renew interval).
     */
    Duration acquireTimeout() {
        return ConfigRules.acquireTimeout(ttl, renewInterval, acquireInterval);
    }

    /** Returns the monotonic clock, in nanoseconds, the elector measures its lease with. */
    public LongSupplier clock() {
        return clock;
    }

    /**
     * Returns how long stopping waits for the calls in flight in a term, and for the leader task to
     * return once interrupted, before it releases the lease anyway.
     */
    public Duration drainTimeout() {
        return drainTimeout;
    }

    /**
     * Returns how long a run waits for its connection to Redis to open before its first acquire
     * attempt: the connection, its handshake included, does not count against the acquire's own
     * bound. A connection not open in time is reported as an acquire error and tried again.
     */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * Returns the executor observer callbacks run on, or empty for the engine's default: a small
     * shared pool that adds a thread while callbacks block.
     */
    public Optional<Executor> callbackExecutor() {
        return Optional.ofNullable(callbackExecutor);
    }

    /**
     * Returns the hooks a graceful step-down waits for before it releases the lease, in the order
     * they are called.
     */
    public List<BeforeRelease> beforeRelease() {
        return beforeRelease;
    }

    /**
     * Returns the key prefixes, beyond the election's own keys, that its fenced writes may name;
     * empty by default. See {@link Builder#fencedKeyPrefixes(String...)}.
     */
    public List<String> fencedKeyPrefixes() {
        return fencedKeyPrefixes;
    }

    /** Returns a builder preset with this configuration. */
    public Builder toBuilder() {
        Builder builder = new Builder(name);
        builder.ttl = ttl;
        builder.renewInterval = renewInterval;
        builder.acquireInterval = acquireInterval;
        builder.instanceId = instanceId;
        builder.observers.addAll(observers);
        builder.leaseAwareScheduling = leaseAwareScheduling;
        builder.releaseNotifications = releaseNotifications;
        builder.ackReplicas = ackReplicas;
        builder.ackTimeout = ackTimeout;
        builder.clock = clock;
        builder.drainTimeout = drainTimeout;
        builder.connectTimeout = connectTimeout;
        builder.callbackExecutor = callbackExecutor;
        builder.beforeRelease.addAll(beforeRelease);
        builder.fencedKeyPrefixes = fencedKeyPrefixes;
        return builder;
    }

    @Override
    public String toString() {
        return "ElectorConfig[name="
                + name
                + ", ttl="
                + ttl
                + ", renewInterval="
                + renewInterval
                + ", acquireInterval="
                + acquireInterval
                + ", instanceId="
                + instanceId
                + "]";
    }

    /** Mutable builder of {@link ElectorConfig}; not thread-safe. */
    public static final class Builder {

        private final String name;

        private Duration ttl = Duration.ZERO;

        private Duration renewInterval = Duration.ZERO;

        private Duration acquireInterval = Duration.ZERO;

        private String instanceId = "";

        private final List<Observer> observers = new ArrayList<>();

        private boolean leaseAwareScheduling = true;

        private boolean releaseNotifications = true;

        private int ackReplicas;

        private Duration ackTimeout = Duration.ZERO;

        private LongSupplier clock = System::nanoTime;

        private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;

        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;

        private @Nullable Executor callbackExecutor;

        private final List<BeforeRelease> beforeRelease = new ArrayList<>();

        private List<String> fencedKeyPrefixes = List.of();

        private Builder(@Nullable String name) {
            this.name = name == null ? "" : name;
        }

        /** Returns the election name this builder was created with. */
        public String name() {
            return name;
        }

        /**
         * Sets how long the lease lives without renewal; zero means {@link #DEFAULT_TTL}. A shorter
         * time to live fails over faster and tolerates shorter pauses. It is truncated to whole
         * milliseconds and must be at least 100 ms.
         */
        public Builder ttl(Duration ttl) {
            this.ttl = required(ttl, "ttl");
            return this;
        }

        /**
         * Sets how often the leader renews; zero means a third of the time to live. Must be at
         * least 1 ms and at most half the time to live.
         */
        public Builder renewInterval(Duration renewInterval) {
            this.renewInterval = required(renewInterval, "renewInterval");
            return this;
        }

        /**
         * Sets how often a follower tries to acquire; zero means half the time to live. Must be at
         * least 1 ms and less than the time to live.
         */
        public Builder acquireInterval(Duration acquireInterval) {
            this.acquireInterval = required(acquireInterval, "acquireInterval");
            return this;
        }

        /**
         * Sets the id written into the lease; empty means {@code <host>-<16 hex digits>}. It must
         * be unique among live instances: two live instances sharing an id take the lease over from
         * each other and both lead.
         */
        public Builder instanceId(String instanceId) {
            this.instanceId = required(instanceId, "instanceId");
            return this;
        }

        /** Adds an observer; observers are notified in the order they were added. */
        public Builder observer(Observer observer) {
            this.observers.add(required(observer, "observer"));
            return this;
        }

        /**
         * Sets whether a follower that learns the holder's remaining lease time tries again when it
         * lapses rather than a whole acquire interval later; true by default. False gives the Go
         * library's fixed polling.
         */
        public Builder leaseAwareScheduling(boolean leaseAwareScheduling) {
            this.leaseAwareScheduling = leaseAwareScheduling;
            return this;
        }

        /**
         * Sets whether a release is announced on the Pub/Sub channel {@code <name>:released} and
         * followers listening on it try to acquire at once; true by default. Followers still poll,
         * so a lost notification only costs the polling delay. Needs a {@code RedisTemplate} (the
         * connection factory is taken from it); off on Redis Cluster, where followers poll.
         */
        public Builder releaseNotifications(boolean releaseNotifications) {
            this.releaseNotifications = releaseNotifications;
            return this;
        }

        /**
         * Makes a won term wait until {@code replicas} replicas have acknowledged it (Redis {@code
         * WAIT}, after an ownership-checked renewal on a dedicated connection) before it starts; a
         * term not acknowledged within {@code timeout} is released and reported as an acquire
         * error. This keeps a Sentinel failover from handing out a token twice when replication
         * lagged; it does not make Redis replication synchronous. 0 replicas switches it off.
         *
         * @param replicas how many replicas must acknowledge, 0 for none
         * @param timeout how long to wait; positive and below the acquire timeout
         */
        public Builder replicaAcknowledgement(int replicas, Duration timeout) {
            if (replicas < 0) {
                throw ConfigRules.invalid(
                        Setting.REPLICA_ACKNOWLEDGEMENT,
                        "redlease: replica acknowledgement count must not be negative");
            }
            this.ackReplicas = replicas;
            this.ackTimeout = required(timeout, "timeout");
            return this;
        }

        /**
         * Sets how long stopping waits for the calls in flight in a term ({@code @LeaderOnly}
         * methods, {@link Term#execute}) and then for the interrupted leader task, before it ends
         * the term and releases the lease anyway; {@value #DEFAULT_DRAIN_TIMEOUT_SECONDS} s by
         * default. Work still running then is named in a WARN; its late fenced writes are refused
         * once a successor is elected.
         *
         * @throws IllegalArgumentException if the timeout is negative
         */
        public Builder drainTimeout(Duration drainTimeout) {
            if (required(drainTimeout, "drainTimeout").isNegative()) {
                throw ConfigRules.invalid(
                        Setting.DRAIN_TIMEOUT, "redlease: drain timeout must not be negative");
            }
            this.drainTimeout = drainTimeout;
            return this;
        }

        /**
         * Sets how long a run waits for its connection to Redis (opening it, the client's handshake
         * included) before its first acquire attempt; {@value #DEFAULT_CONNECT_TIMEOUT_SECONDS} s
         * by default. Connecting waits on a thread of its own, never on the engine's loops, and
         * does not count against the acquire's bound, so a slow first connection (a cold JVM, a
         * loaded machine, a TLS handshake) costs no acquire timeout and no token. A connection not
         * open in time is reported as an acquire error and tried again after the usual back-off.
         *
         * @throws IllegalArgumentException if the timeout is below 1 ms
         */
        public Builder connectTimeout(Duration connectTimeout) {
            if (required(connectTimeout, "connectTimeout").compareTo(ConfigRules.MIN_INTERVAL)
                    < 0) {
                throw ConfigRules.invalid(
                        Setting.CONNECT_TIMEOUT, "redlease: connect timeout must be at least 1ms");
            }
            this.connectTimeout = connectTimeout;
            return this;
        }

        /**
         * Sets the executor that runs observer callbacks (and so the Spring Boot leadership
         * events). Each election's callbacks still run one at a time and in order; a callback that
         * blocks delays only its own election's later callbacks as long as the executor has a
         * thread for each blocked one (virtual threads, or an unbounded pool). By default a small
         * shared pool runs them and adds a thread while callbacks block. A callback the executor
         * would run on the engine's thread that hands it over (a direct executor such as Spring's
         * {@code SyncTaskExecutor}, or a pool that runs tasks on the caller when full) runs on the
         * default pool instead, with a WARN. The executor must not block the thread that hands it a
         * task, nor drop a task.
         */
        public Builder callbackExecutor(Executor callbackExecutor) {
            this.callbackExecutor = required(callbackExecutor, "callbackExecutor");
            return this;
        }

        /**
         * Replaces the monotonic clock the elector measures its lease with ({@code
         * System::nanoTime} by default), in nanoseconds. Meant for fault-injection tests that make
         * one instance's clock run fast or slow.
         */
        public Builder clock(LongSupplier clock) {
            this.clock = required(clock, "clock");
            return this;
        }

        /**
         * Adds a hook that a graceful step-down waits for, bounded by the drain timeout, after the
         * term has ended and before the lease is released; see {@link BeforeRelease}. Hooks are
         * called in the order they were added and run concurrently.
         */
        public Builder beforeRelease(BeforeRelease hook) {
            this.beforeRelease.add(required(hook, "beforeRelease"));
            return this;
        }

        /**
         * Sets the key prefixes, beyond the election's own keys, that fenced writes may name. A
         * fence guards its own election's keys only: by default a fenced write must name keys with
         * the name's hash tag (for a name such as {@code {orders}}) or, for a name without one,
         * keys that start with {@code <name>:}; any other key is refused before Redis is called.
         * Declare a prefix here for keys an application shares with instances that write them under
         * other names (the Go library's users often write keys such as {@code jobs:report}). The
         * election's own keys (lease, token counter, fence mark, leader info, candidates, slot
         * ledgers) stay refused. Replaces the prefixes set before; none by default.
         *
         * @param prefixes the prefixes, each non-empty
         */
        public Builder fencedKeyPrefixes(String... prefixes) {
            List<String> list = new ArrayList<>();
            for (String prefix : required(prefixes, "fencedKeyPrefixes")) {
                if (prefix == null || prefix.isEmpty()) {
                    throw new InvalidElectorConfigException(
                            Setting.FENCED_KEY_PREFIXES,
                            "redlease: fencedKeyPrefixes must not contain a null or empty prefix (an"
                                    + " empty prefix would let the fence name every key)");
                }
                list.add(prefix);
            }
            this.fencedKeyPrefixes = List.copyOf(list);
            return this;
        }

        /**
         * Validates the settings and builds the configuration.
         *
         * @throws IllegalArgumentException naming the first rule broken, in the Go library's order
         *     and words
         */
        public ElectorConfig build() {
            return new ElectorConfig(
                    this,
                    ConfigRules.check(
                            name, ttl, renewInterval, acquireInterval, ackReplicas, ackTimeout));
        }

        private static <T> T required(@Nullable T value, String argument) {
            if (value == null) {
                throw new IllegalArgumentException("redlease: " + argument + " must not be null");
            }
            return value;
        }
    }
}
