package io.redlease.core.partition;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One partition's lease as Redis has it, read by {@link PartitionedElection#holders()}.
 *
 * @param partition the partition
 * @param instanceId the instance that holds its lease, or null when it is free
 * @param token the partition's newest token (the holder's, while the lease is held), or null before
 *     its first term
 * @param remaining how long the lease has left, or null when it is free or has no expiry
 */
public record PartitionHolder(
        int partition,
        @Nullable String instanceId,
        @Nullable Long token,
        @Nullable Duration remaining) {}
