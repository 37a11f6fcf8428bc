package io.redlease.boot.autoconfigure;

import io.redlease.core.scheduling.MissedSlots;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties for redlease leader election ({@code redlease.*}).
 *
 * <p>The top-level settings describe the application's main election. Extra elections live under
 * {@code redlease.elections.<id>} and inherit every setting they do not set from the top level.
 */
@ConfigurationProperties("redlease")
public class RedleaseProperties {

    /** Whether leader election is enabled. */
    private boolean enabled = true;

    /**
     * Name of the main election, shared by every instance that contends for it; the Redis keys
     * derive from it. On Redis Cluster it must contain a hash tag, such as "{report-builder}".
     */
    private @Nullable String name;

    /** Time to live of the leader lease. */
    private Duration ttl = Duration.ofSeconds(5);

    /** How often the leader renews its lease. Defaults to a third of the time to live. */
    private @Nullable Duration renewInterval;

    /** How often a follower tries to acquire the lease. Defaults to half the time to live. */
    private @Nullable Duration acquireInterval;

    /**
     * Id this instance writes into the lease; it must be unique among running instances. Defaults
     * to the host name and 16 random hex digits.
     */
    private @Nullable String instanceId;

    /** Whether to start contending when the application context starts. */
    private boolean autoStartup = true;

    /**
     * Whether a non-daemon thread keeps the JVM running while the application context runs and has
     * leader-only work that nothing else keeps running on a follower (leader-only lifecycles and
     * listener containers, partitioned elections, leader tasks, leadership event listeners).
     */
    private boolean keepAlive = true;

    /**
     * When the elections step down on shutdown: before-http-drain stops their leader-only work and
     * releases their leases before the web server's graceful shutdown waits for requests in flight,
     * so a successor takes over at once; after-http-drain keeps the terms until that wait is over,
     * for applications that serve leader-only work over HTTP (listener containers stop before the
     * drain either way).
     */
    private ShutdownOrder shutdownOrder = ShutdownOrder.BEFORE_HTTP_DRAIN;

    /**
     * Whether a follower warms up the broker clients of its leader-only listener containers at
     * startup, so that a container starts without a first connection when this instance is elected:
     * RabbitMQ's connection stays open, a JMS connection and session are opened and closed, a Kafka
     * consumer makes one metadata round trip.
     */
    private boolean warmStandby = true;

    /**
     * How long an election waits for its connection to Redis before its first acquire; connecting
     * does not count against the acquire's own timeout.
     */
    private Duration connectTimeout = Duration.ofSeconds(10);

    /** Whether a follower retries when the holder's lease lapses instead of at its next poll. */
    private boolean leaseAwareScheduling = true;

    /** Whether a release is announced over Pub/Sub so that a follower takes over at once. */
    private boolean releaseNotifications = true;

    /**
     * Key prefixes, beyond the main election's own keys (its name's hash tag, else "name:"), that
     * its fenced writes may name; not inherited by extra elections.
     */
    private List<String> fencedKeyPrefixes = new ArrayList<>();

    /** Replica acknowledgement of won terms, for replicated (Sentinel) deployments. */
    private final ReplicaAcknowledgement replicaAcknowledgement = new ReplicaAcknowledgement();

    /** Extra elections, by id; each inherits the settings it does not set. */
    private Map<String, Election> elections = new LinkedHashMap<>();

    /** Partitioned elections, by id; each inherits the timings it does not set. */
    private Map<String, RedleasePartitionProperties> partitions = new LinkedHashMap<>();

    /** Defaults of once-per-slot scheduled jobs ({@code @LeaderOnly(oncePerSlot = true)}). */
    private final Scheduling scheduling = new Scheduling();

    /** Leader-only lifecycles of the main election. */
    private final LeaderLifecycle lifecycle = new LeaderLifecycle();

    /** Spring Integration leader events. */
    private final Integration integration = new Integration();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public @Nullable String getName() {
        return name;
    }

    public void setName(@Nullable String name) {
        this.name = name;
    }

    public Duration getTtl() {
        return ttl;
    }

    public void setTtl(Duration ttl) {
        this.ttl = ttl;
    }

    public @Nullable Duration getRenewInterval() {
        return renewInterval;
    }

    public void setRenewInterval(@Nullable Duration renewInterval) {
        this.renewInterval = renewInterval;
    }

    public @Nullable Duration getAcquireInterval() {
        return acquireInterval;
    }

    public void setAcquireInterval(@Nullable Duration acquireInterval) {
        this.acquireInterval = acquireInterval;
    }

    public @Nullable String getInstanceId() {
        return instanceId;
    }

    public void setInstanceId(@Nullable String instanceId) {
        this.instanceId = instanceId;
    }

    public boolean isAutoStartup() {
        return autoStartup;
    }

    public void setAutoStartup(boolean autoStartup) {
        this.autoStartup = autoStartup;
    }

    public boolean isKeepAlive() {
        return keepAlive;
    }

    public void setKeepAlive(boolean keepAlive) {
        this.keepAlive = keepAlive;
    }

    public boolean isWarmStandby() {
        return warmStandby;
    }

    public void setWarmStandby(boolean warmStandby) {
        this.warmStandby = warmStandby;
    }

    public ShutdownOrder getShutdownOrder() {
        return shutdownOrder;
    }

    public void setShutdownOrder(ShutdownOrder shutdownOrder) {
        this.shutdownOrder = shutdownOrder;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public boolean isLeaseAwareScheduling() {
        return leaseAwareScheduling;
    }

    public void setLeaseAwareScheduling(boolean leaseAwareScheduling) {
        this.leaseAwareScheduling = leaseAwareScheduling;
    }

    public boolean isReleaseNotifications() {
        return releaseNotifications;
    }

    public void setReleaseNotifications(boolean releaseNotifications) {
        this.releaseNotifications = releaseNotifications;
    }

    public List<String> getFencedKeyPrefixes() {
        return fencedKeyPrefixes;
    }

    public void setFencedKeyPrefixes(List<String> fencedKeyPrefixes) {
        this.fencedKeyPrefixes = fencedKeyPrefixes;
    }

    public ReplicaAcknowledgement getReplicaAcknowledgement() {
        return replicaAcknowledgement;
    }

    public Map<String, Election> getElections() {
        return elections;
    }

    public Map<String, RedleasePartitionProperties> getPartitions() {
        return partitions;
    }

    public void setPartitions(Map<String, RedleasePartitionProperties> partitions) {
        this.partitions = partitions;
    }

    public Scheduling getScheduling() {
        return scheduling;
    }

    public void setElections(Map<String, Election> elections) {
        this.elections = elections;
    }

    public LeaderLifecycle getLifecycle() {
        return lifecycle;
    }

    public Integration getIntegration() {
        return integration;
    }

    /** Spring Integration leader events ({@code OnGrantedEvent}, {@code OnRevokedEvent}). */
    public static class Integration {

        /**
         * Role of the main election in Spring Integration's leader events, which start and stop the
         * endpoints annotated with that @Role; a named election's role is its id.
         */
        private String role = "leader";

        public String getRole() {
            return role;
        }

        public void setRole(String role) {
            this.role = role;
        }
    }

    /** When the elections step down on shutdown, relative to the web server's graceful drain. */
    public enum ShutdownOrder {

        /**
         * Step down and release the leases before the web server's graceful shutdown waits for the
         * requests in flight.
         */
        BEFORE_HTTP_DRAIN,

        /** Step down and release the leases after the web server's graceful shutdown. */
        AFTER_HTTP_DRAIN
    }

    /** Leader-only lifecycles of an election. */
    public static class LeaderLifecycle {

        /**
         * Ids of RabbitMQ, Kafka or JMS listener containers that run only while this instance leads
         * the election; each must be declared with autoStartup = "false".
         */
        private List<String> listeners = new ArrayList<>();

        public List<String> getListeners() {
            return listeners;
        }

        public void setListeners(List<String> listeners) {
            this.listeners = listeners;
        }
    }

    /** Defaults of once-per-slot scheduled jobs. */
    public static class Scheduling {

        /**
         * What a once-per-slot job does with slots missed while no instance ran them, unless its
         * annotation says: RUN_LATEST runs the most recent once right after election, SKIP runs
         * none, RUN_ALL runs them all, oldest first, up to max-catch-up.
         */
        private MissedSlots missedSlots = MissedSlots.RUN_LATEST;

        /**
         * The most missed slots RUN_ALL runs at once, and how many slots a leader may fall behind
         * before it drops the oldest. From 1 to 1000.
         */
        // SlotJobs.DEFAULT_MAX_CATCH_UP, written out so that the configuration metadata has it.
        private int maxCatchUp = 10;

        public MissedSlots getMissedSlots() {
            return missedSlots;
        }

        public void setMissedSlots(MissedSlots missedSlots) {
            this.missedSlots = missedSlots;
        }

        public int getMaxCatchUp() {
            return maxCatchUp;
        }

        public void setMaxCatchUp(int maxCatchUp) {
            this.maxCatchUp = maxCatchUp;
        }
    }

    /** Replica acknowledgement settings. */
    public static class ReplicaAcknowledgement {

        /**
         * How many replicas must acknowledge a won term (Redis WAIT) before it starts; 0 turns the
         * check off.
         */
        private int replicas;

        /** How long to wait for the replicas to acknowledge a won term. */
        private Duration timeout = Duration.ofMillis(100);

        public int getReplicas() {
            return replicas;
        }

        public void setReplicas(int replicas) {
            this.replicas = replicas;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** An extra election; unset values are inherited from the top-level settings. */
    public static class Election {

        /** Name of the election, shared by every instance that contends for it. */
        private @Nullable String name;

        /** Time to live of the leader lease. */
        private @Nullable Duration ttl;

        /** How often the leader renews its lease. */
        private @Nullable Duration renewInterval;

        /** How often a follower tries to acquire the lease. */
        private @Nullable Duration acquireInterval;

        /** Id this instance writes into the lease. */
        private @Nullable String instanceId;

        /** Whether to start contending when the application context starts. */
        private @Nullable Boolean autoStartup;

        /**
         * Key prefixes, beyond this election's own keys (its name's hash tag, else "name:"), that
         * its fenced writes may name; not inherited from the main election.
         */
        private List<String> fencedKeyPrefixes = new ArrayList<>();

        /** Leader-only lifecycles of this election. */
        private final LeaderLifecycle lifecycle = new LeaderLifecycle();

        public @Nullable String getName() {
            return name;
        }

        public void setName(@Nullable String name) {
            this.name = name;
        }

        public @Nullable Duration getTtl() {
            return ttl;
        }

        public void setTtl(@Nullable Duration ttl) {
            this.ttl = ttl;
        }

        public @Nullable Duration getRenewInterval() {
            return renewInterval;
        }

        public void setRenewInterval(@Nullable Duration renewInterval) {
            this.renewInterval = renewInterval;
        }

        public @Nullable Duration getAcquireInterval() {
            return acquireInterval;
        }

        public void setAcquireInterval(@Nullable Duration acquireInterval) {
            this.acquireInterval = acquireInterval;
        }

        public @Nullable String getInstanceId() {
            return instanceId;
        }

        public void setInstanceId(@Nullable String instanceId) {
            this.instanceId = instanceId;
        }

        public @Nullable Boolean getAutoStartup() {
            return autoStartup;
        }

        public void setAutoStartup(@Nullable Boolean autoStartup) {
            this.autoStartup = autoStartup;
        }

        public List<String> getFencedKeyPrefixes() {
            return fencedKeyPrefixes;
        }

        public void setFencedKeyPrefixes(List<String> fencedKeyPrefixes) {
            this.fencedKeyPrefixes = fencedKeyPrefixes;
        }

        public LeaderLifecycle getLifecycle() {
            return lifecycle;
        }
    }
}
