package io.redlease.core;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The current holder of an election's lease and what it published about itself ({@link
 * LeaderMetadata}), as read from Redis by {@link Elector#leaderInfo()}.
 *
 * <p>A holder that published nothing (discovery off, a Go instance, or a term that has just begun
 * and not yet published) has an instance id and no metadata: {@link #metadata()} is empty.
 * Advisory: the holder may lose the lease the moment after the read.
 *
 * @param instanceId the holder's instance id
 * @param token the token of the term that published the metadata, or 0 when there is none
 * @param leaseTimeLeft the lease's remaining time to live when read
 * @param metadata what the holder published, if anything
 */
public record LeaderInfo(
        String instanceId, long token, Duration leaseTimeLeft, Optional<LeaderMetadata> metadata) {

    /** Returns the URL the leader advertised, if any. */
    public Optional<String> url() {
        return metadata.map(LeaderMetadata::url);
    }

    /** Returns the version the leader advertised, if any. */
    public Optional<String> version() {
        return metadata.map(LeaderMetadata::version);
    }

    /** Returns the attributes the leader advertised; empty when none. */
    public Map<String, String> attributes() {
        return metadata.map(LeaderMetadata::attributes).orElse(Map.of());
    }

    static LeaderInfo of(
            String instanceId, long token, Duration left, @Nullable LeaderMetadata metadata) {
        return new LeaderInfo(instanceId, token, left, Optional.ofNullable(metadata));
    }
}
