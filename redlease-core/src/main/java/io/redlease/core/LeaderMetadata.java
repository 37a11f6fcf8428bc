package io.redlease.core;

import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * What an instance publishes about itself while it leads, so that any instance can find the leader
 * ({@link Elector#leaderInfo()}): the URL other instances reach it at, its version, and free-form
 * attributes. Published with {@link Elector#advertise(LeaderMetadata)}.
 *
 * <p>It is kept in Redis beside the lease, in the key {@code <name>:leader:info}, and lives exactly
 * as long as the lease; the Go library ignores that key. It is advisory: it says where the holder
 * of the lease can be reached, not that it still leads when a request arrives.
 *
 * @param url the URL other instances reach this one at, or null
 * @param version the application's version, or null
 * @param attributes free-form attributes (a zone, a host name), copied
 */
public record LeaderMetadata(
        @Nullable String url, @Nullable String version, Map<String, String> attributes) {

    /** Prefix of the attribute fields in the Redis hash, apart from the fixed fields. */
    static final String ATTRIBUTE_PREFIX = "attribute.";

    /**
     * Creates the metadata.
     *
     * @throws IllegalArgumentException if {@code attributes} is null or holds a null or empty key
     *     or a null value
     */
    public LeaderMetadata {
        if (attributes == null) {
            throw new IllegalArgumentException("redlease: attributes must not be null");
        }
        attributes.forEach(
                (key, value) -> {
                    if (key == null || key.isEmpty() || value == null) {
                        throw new IllegalArgumentException(
                                "redlease: attribute keys must not be null or empty and values"
                                        + " must not be null; got "
                                        + key
                                        + "="
                                        + value);
                    }
                });
        attributes = Map.copyOf(new TreeMap<>(attributes));
    }

    /** Returns metadata with only a URL. */
    public static LeaderMetadata url(String url) {
        return new LeaderMetadata(url, null, Map.of());
    }
}
