package io.redlease.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * Keeps this instance's {@link LeaderMetadata} beside its lease while it leads, and reads the
 * holder's: the hash {@code <name>:leader:info} is written by the acquire that wins a term, in the
 * same round trip (or when a term begins, if it was advertised after that acquire), given the
 * lease's remaining lifetime after every renewal, and deleted when the term ends (unless a later
 * term replaced it). Nothing is written while no metadata is advertised.
 *
 * <p>As an {@link Observer} it runs on the election's callback lane, never on the engine's threads,
 * with one round trip per callback it acts on; a failure is reported by the lane (logged at WARN)
 * and the next renewal tries again.
 */
final class LeaderInfoStore implements Observer {

    private static final RedisSerializer<String> STRING = RedisSerializer.string();

    private static final String INSTANCE = "instance";

    private static final String TOKEN = "token";

    private static final String URL = "url";

    private static final String VERSION = "version";

    private final RedisOperations<String, String> redis;

    private final String instanceId;

    private final List<String> keys;

    /** The lease, the info and the high-water mark, for reading. */
    private final List<String> readKeys;

    private final String infoKey;

    private volatile @Nullable LeaderMetadata metadata;

    /** What the last acquire attempt would have published had it won. */
    private volatile @Nullable LeaderMetadata sentWithAcquire;

    /** The token of the current term, or 0 between terms. */
    private volatile long token;

    LeaderInfoStore(RedisOperations<String, String> redis, ElectorConfig config) {
        this.redis = redis;
        this.instanceId = config.instanceId();
        this.infoKey = infoKey(config.name());
        this.keys = List.of(config.name() + ":leader", infoKey);
        this.readKeys =
                List.of(config.name() + ":leader", infoKey, config.name() + ":fence:applied");
    }

    /**
     * Returns the elector's own observers (such as this store) followed by the configured ones, so
     * metadata is published before the application's observers run.
     */
    static List<Observer> first(List<Observer> own, List<Observer> observers) {
        List<Observer> all = new ArrayList<>(own.size() + observers.size());
        all.addAll(own);
        all.addAll(observers);
        return all;
    }

    /** Returns the key of the named election's leader metadata. */
    static String infoKey(String name) {
        return name + ":leader:info";
    }

    /** Sets what to publish (null: nothing), and publishes it at once while leading. */
    void advertise(@Nullable LeaderMetadata metadata) {
        this.metadata = metadata;
        long current = token;
        if (current > 0) {
            if (metadata == null) {
                remove(current);
            } else {
                publish(current, metadata);
            }
        }
    }

    @Nullable LeaderMetadata advertised() {
        return metadata;
    }

    /**
     * Returns the field, value pairs an acquire publishes when it wins (empty when nothing is
     * advertised), and remembers what it sent: a term won with them needs no separate publish.
     */
    List<String> acquireFields() {
        LeaderMetadata current = metadata;
        sentWithAcquire = current;
        return current == null ? List.of() : fields(current);
    }

    @Override
    public void onElected(long token) {
        this.token = token;
        LeaderMetadata current = metadata;
        if (current != sentWithAcquire) {
            // Advertised, changed or withdrawn after the winning acquire was sent: what it
            // wrote is out of date.
            if (current != null) {
                publish(token, current);
            } else {
                remove(token);
            }
        }
    }

    @Override
    public void onRoundTrip(Operation operation, Duration duration, boolean succeeded) {
        long current = token;
        LeaderMetadata published = metadata;
        if (operation != Operation.RENEW || !succeeded || current == 0 || published == null) {
            return;
        }
        if (!isOne(
                execute(Scripts.LEADER_INFO_REFRESH, keys, instanceId, Long.toString(current)))) {
            // Expired during a pause, or not yet written: write it again while the lease is ours.
            publish(current, published);
        }
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        long ended = token;
        token = 0;
        if (ended > 0 && metadata != null) {
            remove(ended);
        }
    }

    private void publish(long term, LeaderMetadata metadata) {
        List<String> args = new ArrayList<>(List.of(instanceId, Long.toString(term)));
        args.addAll(fields(metadata));
        execute(Scripts.LEADER_INFO_PUBLISH, keys, args.toArray(String[]::new));
    }

    private static List<String> fields(LeaderMetadata metadata) {
        List<String> args = new ArrayList<>();
        if (metadata.url() != null) {
            args.add(URL);
            args.add(metadata.url());
        }
        if (metadata.version() != null) {
            args.add(VERSION);
            args.add(metadata.version());
        }
        metadata.attributes()
                .forEach(
                        (key, value) -> {
                            args.add(LeaderMetadata.ATTRIBUTE_PREFIX + key);
                            args.add(value);
                        });
        return args;
    }

    private void remove(long term) {
        execute(Scripts.LEADER_INFO_REMOVE, List.of(infoKey), instanceId, Long.toString(term));
    }

    /** Reads the lease holder and its metadata with one read-only round trip. */
    Optional<LeaderInfo> read() {
        List<Object> reply = execute(Scripts.LEADER_INFO_READ, readKeys);
        if (reply == null || reply.size() < 2) {
            return Optional.empty();
        }
        String holder = String.valueOf(reply.get(0));
        long pttl = LeaseProtocol.asLong(reply.get(1));
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 2; i + 1 < reply.size(); i += 2) {
            fields.put(String.valueOf(reply.get(i)), String.valueOf(reply.get(i + 1)));
        }
        Duration left = Duration.ofMillis(Math.max(pttl, 0));
        if (!holder.equals(fields.get(INSTANCE))) {
            return Optional.of(LeaderInfo.of(holder, 0, left, null));
        }
        Map<String, String> attributes = new LinkedHashMap<>();
        fields.forEach(
                (field, value) -> {
                    if (field.startsWith(LeaderMetadata.ATTRIBUTE_PREFIX)) {
                        attributes.put(
                                field.substring(LeaderMetadata.ATTRIBUTE_PREFIX.length()), value);
                    }
                });
        long term = parseToken(fields.get(TOKEN));
        return Optional.of(
                LeaderInfo.of(
                        holder,
                        term,
                        left,
                        new LeaderMetadata(fields.get(URL), fields.get(VERSION), attributes)));
    }

    private static long parseToken(@Nullable String value) {
        try {
            return value == null ? 0 : Long.parseLong(value);
        } catch (NumberFormatException ex) {
            return 0;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T> @Nullable T execute(
            org.springframework.data.redis.core.script.RedisScript<T> script,
            List<String> keys,
            String... args) {
        return (T) redis.execute(script, STRING, (RedisSerializer) STRING, keys, (Object[]) args);
    }

    private static boolean isOne(@Nullable Object reply) {
        return reply != null && LeaseProtocol.asLong(reply) == 1L;
    }

    @Override
    public String toString() {
        return "LeaderInfoStore[" + infoKey + "]";
    }
}
