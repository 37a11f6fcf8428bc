package io.redlease.boot.autoconfigure;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A partitioned election ({@code redlease.partitions.<id>.*}): a role's work split into {@code
 * count} partitions, each an election of its own, spread over the live instances. Unset timings and
 * the instance id are inherited from the top-level {@code redlease.*} settings.
 */
public class RedleasePartitionProperties {

    /** Number of partitions, from 1 to 65536; every instance must use the same count. */
    private @Nullable Integer count;

    /**
     * Name shared by every instance; the Redis keys derive from it and it must not contain '{' or
     * '}'. Defaults to redlease.name (without its braces) followed by ':' and the id.
     */
    private @Nullable String name;

    /** Time to live of each partition's lease. */
    private @Nullable Duration ttl;

    /** How often owned partitions renew their leases. */
    private @Nullable Duration renewInterval;

    /** How often a partition this instance campaigns for is tried. */
    private @Nullable Duration acquireInterval;

    /** Id this instance writes into the leases and the member set. */
    private @Nullable String instanceId;

    /** Whether to join when the application context starts. */
    private @Nullable Boolean autoStartup;

    /**
     * How often this instance refreshes its membership and rebalances. Defaults to the renew
     * interval or 500ms, whichever is shorter; at most the renew interval.
     */
    private @Nullable Duration balanceInterval;

    /**
     * How long a newly seen member must stay before this instance counts it and hands partitions
     * over to it. Defaults to the renew interval.
     */
    private @Nullable Duration settle;

    public @Nullable Integer getCount() {
        return count;
    }

    public void setCount(@Nullable Integer count) {
        this.count = count;
    }

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

    public @Nullable Duration getBalanceInterval() {
        return balanceInterval;
    }

    public void setBalanceInterval(@Nullable Duration balanceInterval) {
        this.balanceInterval = balanceInterval;
    }

    public @Nullable Duration getSettle() {
        return settle;
    }

    public void setSettle(@Nullable Duration settle) {
        this.settle = settle;
    }
}
