package io.redlease.core.partition;

import io.redlease.core.ElectorConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Immutable settings of a {@link PartitionedElection}: the name, the partition count, the lease
 * timings every partition's election uses, the instance id, the balancing cadence and the
 * listeners.
 *
 * <p>Built with {@link #builder(String, int)}. The lease timings follow {@link ElectorConfig}'s
 * rules and defaults (time to live 5 s, renew interval a third of it, acquire interval half of it).
 * Partition {@code i} is the election named {@code {<name>:p<i>}}, so its keys are {@code
 * {<name>:p<i>}:leader}, {@code {<name>:p<i>}:fence} and {@code {<name>:p<i>}:fence:applied}; the
 * braces are a Redis Cluster hash tag, so partitions spread over the cluster's slots. The live
 * instances are kept in the sorted set {@code {<name>}:members}.
 */
public final class PartitionedElectionConfig {

    /** The most partitions one partitioned election may have. */
    public static final int MAX_PARTITIONS = 65_536;

    /** The longest default balancing interval: 500 ms. */
    static final Duration MAX_DEFAULT_BALANCE_INTERVAL = Duration.ofMillis(500);

    private final String name;

    private final int partitions;

    private final ElectorConfig election;

    private final Duration balanceInterval;

    private final Duration settle;

    private final List<PartitionListener> listeners;

    private PartitionedElectionConfig(
            Builder builder, ElectorConfig election, Duration balanceInterval, Duration settle) {
        this.name = builder.name;
        this.partitions = builder.partitions;
        this.election = election;
        this.balanceInterval = balanceInterval;
        this.settle = settle;
        this.listeners = List.copyOf(builder.listeners);
    }

    /**
     * Starts a builder.
     *
     * @param name the name all instances share; not empty, without '{' or '}'
     * @param partitions the partition count, from 1 to {@value #MAX_PARTITIONS}; all instances must
     *     use the same count
     * @return a new builder
     */
    public static Builder builder(String name, int partitions) {
        return new Builder(name, partitions);
    }

    /** Returns the name all instances share. */
    public String name() {
        return name;
    }

    /** Returns the partition count. */
    public int partitions() {
        return partitions;
    }

    /** Returns the lease time to live of every partition. */
    public Duration ttl() {
        return election.ttl();
    }

    /** Returns how often an owned partition's lease is renewed. */
    public Duration renewInterval() {
        return election.renewInterval();
    }

    /** Returns how often a partition this instance campaigns for is tried. */
    public Duration acquireInterval() {
        return election.acquireInterval();
    }

    /** Returns this instance's id, written into its partitions' leases and the member set. */
    public String instanceId() {
        return election.instanceId();
    }

    /** Returns how long stopping a partition's term waits for work in flight. */
    public Duration drainTimeout() {
        return election.drainTimeout();
    }

    /** Returns the executor partition callbacks run on, or empty for the engine's default. */
    public Optional<Executor> callbackExecutor() {
        return election.callbackExecutor();
    }

    /** Returns how often this instance refreshes its membership and rebalances. */
    public Duration balanceInterval() {
        return balanceInterval;
    }

    /**
     * Returns how long a newly seen member must stay before this instance counts it; a member that
     * comes back soon after dropping out must stay at least a time to live.
     */
    public Duration settle() {
        return settle;
    }

    /** Returns the listeners, in notification order. */
    public List<PartitionListener> listeners() {
        return listeners;
    }

    /**
     * Returns the configuration of one partition's election: this configuration's timings and
     * instance id under the partition's election name.
     */
    ElectorConfig partition(int partition, PartitionObserver observer) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(PartitionedElection.electionName(name, partition))
                        .ttl(election.ttl())
                        .renewInterval(election.renewInterval())
                        .acquireInterval(election.acquireInterval())
                        .instanceId(election.instanceId())
                        .drainTimeout(election.drainTimeout())
                        .observer(observer);
        election.callbackExecutor().ifPresent(builder::callbackExecutor);
        return builder.build();
    }

    @Override
    public String toString() {
        return "PartitionedElectionConfig[name="
                + name
                + ", partitions="
                + partitions
                + ", ttl="
                + ttl()
                + ", balanceInterval="
                + balanceInterval
                + ", settle="
                + settle
                + ", instanceId="
                + instanceId()
                + "]";
    }

    /** Mutable builder of {@link PartitionedElectionConfig}; not thread-safe. */
    public static final class Builder {

        private final String name;

        private final int partitions;

        private final ElectorConfig.Builder election;

        private Duration balanceInterval = Duration.ZERO;

        private Duration settle = Duration.ZERO;

        private final List<PartitionListener> listeners = new ArrayList<>();

        private Builder(@Nullable String name, int partitions) {
            this.name = name == null ? "" : name;
            this.partitions = partitions;
            this.election = ElectorConfig.builder(this.name);
        }

        /**
         * Sets every partition's lease time to live; zero means {@link ElectorConfig#DEFAULT_TTL}.
         * A member that stops refreshing leaves the member set after this long too.
         */
        public Builder ttl(Duration ttl) {
            election.ttl(ttl);
            return this;
        }

        /** Sets how often owned partitions renew; zero means a third of the time to live. */
        public Builder renewInterval(Duration renewInterval) {
            election.renewInterval(renewInterval);
            return this;
        }

        /**
         * Sets how often a partition this instance campaigns for is tried; zero means half the time
         * to live.
         */
        public Builder acquireInterval(Duration acquireInterval) {
            election.acquireInterval(acquireInterval);
            return this;
        }

        /**
         * Sets this instance's id; empty means {@code <host>-<16 hex digits>}. Unique among live
         * instances.
         */
        public Builder instanceId(String instanceId) {
            election.instanceId(instanceId);
            return this;
        }

        /** Sets how long stopping a partition's term waits for work in flight; 10 s by default. */
        public Builder drainTimeout(Duration drainTimeout) {
            election.drainTimeout(drainTimeout);
            return this;
        }

        /** Sets the executor the partitions' callbacks run on; see {@link ElectorConfig}. */
        public Builder callbackExecutor(Executor callbackExecutor) {
            election.callbackExecutor(callbackExecutor);
            return this;
        }

        /**
         * Sets how often this instance refreshes its member entry and rebalances; zero means the
         * renew interval or 500 ms, whichever is shorter. Must be at least 1 ms and at most the
         * renew interval, so the entry never lapses while the instance is healthy.
         */
        public Builder balanceInterval(Duration balanceInterval) {
            this.balanceInterval = required(balanceInterval, "balanceInterval");
            return this;
        }

        /**
         * Sets how long a newly seen member must stay in the member set before this instance counts
         * it and hands partitions over to it; zero means the balance interval, so a newcomer counts
         * once seen at two balancing rounds in a row. (A starting instance first looks for one
         * balance interval, campaigning for nothing, and counts every member it sees meanwhile at
         * once, so instances that start together split the partitions without first piling them on
         * one.) A member that drops out and comes back soon after is flapping: it must stay a whole
         * time to live, or this settle period if longer, before it counts again, so it does not
         * move partitions back and forth.
         */
        public Builder settle(Duration settle) {
            this.settle = required(settle, "settle");
            return this;
        }

        /** Adds a listener; listeners are notified in the order they were added. */
        public Builder listener(PartitionListener listener) {
            this.listeners.add(required(listener, "listener"));
            return this;
        }

        /**
         * Validates the settings and builds the configuration.
         *
         * @throws IllegalArgumentException naming the argument and the rule broken
         */
        public PartitionedElectionConfig build() {
            ElectorConfig checked = election.build();
            if (name.indexOf('{') >= 0 || name.indexOf('}') >= 0) {
                throw new IllegalArgumentException(
                        "redlease: name must not contain '{' or '}' (each partition gets its own"
                                + " hash tag {<name>:p<i>}); got '"
                                + name
                                + "'");
            }
            if (partitions < 1 || partitions > MAX_PARTITIONS) {
                throw new IllegalArgumentException(
                        "redlease: partitions must be between 1 and "
                                + MAX_PARTITIONS
                                + "; got "
                                + partitions);
            }
            if (balanceInterval.isNegative() || settle.isNegative()) {
                throw new IllegalArgumentException(
                        "redlease: "
                                + (settle.isNegative() ? "settle" : "balanceInterval")
                                + " must not be negative");
            }
            Duration renew = checked.renewInterval();
            Duration balance = balanceInterval;
            if (balance.isZero()) {
                balance =
                        renew.compareTo(MAX_DEFAULT_BALANCE_INTERVAL) < 0
                                ? renew
                                : MAX_DEFAULT_BALANCE_INTERVAL;
            } else if (balance.toMillis() < 1 || balance.compareTo(renew) > 0) {
                throw new IllegalArgumentException(
                        "redlease: balanceInterval must be at least 1ms and at most the renew"
                                + " interval ("
                                + renew.toMillis()
                                + "ms); got "
                                + balance.toMillis()
                                + "ms");
            }
            return new PartitionedElectionConfig(
                    this, checked, balance, settle.isZero() ? balance : settle);
        }

        private static <T> T required(@Nullable T value, String argument) {
            if (value == null) {
                throw new IllegalArgumentException("redlease: " + argument + " must not be null");
            }
            return value;
        }
    }
}
