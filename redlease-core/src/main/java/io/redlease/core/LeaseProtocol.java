package io.redlease.core;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * One election's Redis protocol: its keys, the scripts that act on them, and their replies. The
 * state machine asks it for acquire, renew and release as futures and never builds a request
 * itself; the holder lookup runs on the caller's thread, and the once-per-slot ledger's fenced
 * calls return futures their callers await within their term ({@link FencedWrites}).
 *
 * <p>Keys and semantics are the Go library's, so Go and Java instances can share an election:
 * {@code <name>:leader} holds the holder's instance id with the lease's time to live, {@code
 * <name>:fence} counts tokens, and {@code <name>:fence:applied} is the high-water mark that fenced
 * writes are checked against. Neither token key ever gets a time to live.
 */
final class LeaseProtocol {

    /** Tokens must stay below 2^53 so Lua's double comparison is exact. */
    static final long MAX_TOKEN = 1L << 53;

    private static final RedisSerializer<String> STRING = RedisSerializer.string();

    private final RedisOperations<String, String> redis;

    private final ScriptRunner runner;

    private final @Nullable RedisConnectionFactory connectionFactory;

    private final String instanceId;

    private final String ttlMillis;

    private final String releaseChannel;

    private final String markKey;

    private final List<String> leaseKey;

    private final List<String> acquireKeys;

    private final List<String> leaseAndMark;

    private final List<String> preferringKeys;

    private volatile @Nullable String preferenceRank;

    private final String infoKey;

    private volatile Supplier<List<String>> acquireMetadata = List::of;

    LeaseProtocol(
            RedisOperations<String, String> redis,
            @Nullable RedisConnectionFactory connectionFactory,
            ElectorConfig config) {
        this.redis = redis;
        this.connectionFactory = connectionFactory;
        this.runner =
                connectionFactory != null
                        ? ScriptRunner.of(redis, connectionFactory)
                        : new ScriptRunner.Blocking(redis);
        String name = config.name();
        this.instanceId = config.instanceId();
        this.ttlMillis = Long.toString(Math.max(config.ttl().toMillis(), 1));
        this.releaseChannel = releaseChannel(name);
        this.markKey = name + ":fence:applied";
        this.leaseKey = List.of(name + ":leader");
        this.infoKey = LeaderInfoStore.infoKey(name);
        this.acquireKeys = List.of(name + ":leader", name + ":fence", markKey);
        this.leaseAndMark = List.of(name + ":leader", markKey);
        this.preferringKeys =
                List.of(name + ":leader", name + ":fence", markKey, Preference.candidatesKey(name));
    }

    /** Returns the Pub/Sub channel on which a release of the named election is announced. */
    static String releaseChannel(String name) {
        return name + ":released";
    }

    /** Returns the lease's time to live as sent to Redis, in milliseconds. */
    String ttlMillis() {
        return ttlMillis;
    }

    /** Returns the runner of the election's scripts, for its fenced writes too. */
    ScriptRunner runner() {
        return runner;
    }

    /** Returns whether the runner parks no thread per call in flight. */
    boolean nonBlocking() {
        return !(runner instanceof ScriptRunner.Blocking);
    }

    // The state machine's round trips.

    /**
     * Opens the connection the state machine's scripts run on, unless it is open; see {@link
     * ScriptRunner#connect()}.
     */
    CompletableFuture<Void> connect() {
        return runner.connect();
    }

    /** Tries to win a new term: the token won, or the current holder's remaining lease time. */
    CompletableFuture<AcquireReply> acquire() {
        String rank = preferenceRank;
        List<String> metadata = acquireMetadata.get();
        List<String> keys = rank != null ? preferringKeys : acquireKeys;
        List<String> args = new ArrayList<>(3 + metadata.size());
        args.add(instanceId);
        args.add(ttlMillis);
        if (rank != null) {
            args.add(rank);
        }
        if (!metadata.isEmpty()) {
            keys = new ArrayList<>(keys);
            keys.add(infoKey);
            args.addAll(metadata);
        }
        return runner.run(rank != null ? Scripts.ACQUIRE_PREFERRING : Scripts.ACQUIRE, keys, args)
                .thenApply(LeaseProtocol::acquireReply);
    }

    /**
     * Sets where a won acquire takes the leader metadata it publishes in the same round trip:
     * field, value pairs, empty for none.
     */
    void acquireMetadata(Supplier<List<String>> metadata) {
        this.acquireMetadata = metadata;
    }

    /**
     * Sets this instance's rank among preferred candidates: while set, an acquire does not take a
     * free lease if a live, ready candidate ranks higher (see {@code acquire-preferring.lua}).
     */
    void preferenceRank(@Nullable String rank) {
        this.preferenceRank = rank;
    }

    private static AcquireReply acquireReply(@Nullable List<Object> reply) {
        if (reply == null || reply.size() < 2 || reply.size() > 3) {
            throw new InvalidDataAccessApiUsageException(
                    "redlease: unexpected acquire reply " + reply);
        }
        String holder = reply.size() == 3 ? asString(reply.get(2)) : null;
        return new AcquireReply(asLong(reply.get(0)), asLong(reply.get(1)), holder);
    }

    /** Extends the lease of the given term; false when the term is over. */
    CompletableFuture<Boolean> renew(long token) {
        return runner.run(
                        Scripts.RENEW,
                        leaseAndMark,
                        List.of(instanceId, ttlMillis, Long.toString(token)))
                .thenApply(LeaseProtocol::isOne);
    }

    /**
     * Deletes the lease of the given term and announces it; false when the lease is gone or belongs
     * to another instance or to a newer term of this one.
     */
    CompletableFuture<Boolean> release(long token) {
        return runner.run(
                        Scripts.RELEASE,
                        leaseAndMark,
                        List.of(instanceId, releaseChannel, Long.toString(token)))
                .thenApply(LeaseProtocol::isOne);
    }

    /**
     * Renews the lease on a dedicated connection and waits until the given number of replicas have
     * everything written before it, including the acquire; returns how many did, or -1 when the
     * renewal found the term over. Blocks the calling thread: WAIT holds its connection.
     */
    long confirmReplicas(long token, int replicas, Duration timeout) {
        RedisConnectionFactory factory = connectionFactory;
        if (factory == null) {
            throw new IllegalStateException(
                    "redlease: replica acknowledgement needs a RedisTemplate");
        }
        byte[][] renewArgs = {
            bytes(leaseAndMark.get(0)),
            bytes(leaseAndMark.get(1)),
            bytes(instanceId),
            bytes(ttlMillis),
            bytes(Long.toString(token))
        };
        byte[][] waitArgs = {
            bytes(Integer.toString(replicas)), bytes(Long.toString(timeout.toMillis()))
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
                            leaseAndMark.size(),
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

    // Calls made on the caller's thread.

    /** Reads who holds the lease and for how long. */
    Optional<Elector.LeaseHolder> holder() {
        List<Object> reply = redis.execute(Scripts.HOLDER, STRING, listReader(), leaseKey);
        if (reply == null || reply.size() != 2 || reply.get(0) == null) {
            return Optional.empty();
        }
        long pttl = asLong(reply.get(1));
        return Optional.of(
                new Elector.LeaseHolder(
                        String.valueOf(reply.get(0)), pttl >= 0 ? Duration.ofMillis(pttl) : null));
    }

    /** Reads a hash's fields and values; empty when the hash does not exist. */
    Map<String, String> readHash(String key) {
        List<Object> reply = redis.execute(Scripts.READ_HASH, STRING, listReader(), List.of(key));
        Map<String, String> entries = new HashMap<>();
        if (reply != null) {
            for (int i = 0; i + 1 < reply.size(); i += 2) {
                entries.put(String.valueOf(reply.get(i)), String.valueOf(reply.get(i + 1)));
            }
        }
        return entries;
    }

    /**
     * Reads a once-per-slot job's ledger for its scheduling on the election's script runner, for a
     * caller that bounds the wait (see {@link #hashOf}); background traffic ({@link
     * EngineTraffic}).
     */
    CompletableFuture<List<Object>> readLedgerAsync(String key) {
        return runner.run(Scripts.SLOT_READ, List.of(key), List.of());
    }

    /** Returns the fields and values of a {@link #readLedgerAsync} reply; empty for none. */
    static Map<String, String> hashOf(@Nullable List<Object> reply) {
        Map<String, String> entries = new HashMap<>();
        if (reply != null) {
            for (int i = 0; i + 1 < reply.size(); i += 2) {
                entries.put(text(reply.get(i)), text(reply.get(i + 1)));
            }
        }
        return entries;
    }

    /**
     * Has a term take over a once-per-slot job's ledger (see {@code slot-claim.lua}); the reply
     * lists the ledger's fields and values after a 1, or is a lone 0 when the term may no longer
     * write. A fenced call: await it with {@link FencedWrites#await}.
     */
    CompletableFuture<List<Object>> claimLedger(
            long token, String ledgerKey, long since, String zone, String epoch) {
        checkToken(token);
        return runner.run(
                Scripts.SLOT_CLAIM,
                List.of(markKey, leaseKey.get(0), ledgerKey),
                List.of(Long.toString(token), instanceId, Long.toString(since), zone, epoch));
    }

    /** Returns the ledger's fields of a {@link #claimLedger} reply, or null when refused. */
    static @Nullable Map<String, String> claimedLedger(@Nullable List<Object> reply) {
        if (reply == null || reply.isEmpty() || asLong(reply.get(0)) != 1) {
            return null;
        }
        Map<String, String> entries = new HashMap<>();
        for (int i = 1; i + 1 < reply.size(); i += 2) {
            entries.put(text(reply.get(i)), text(reply.get(i + 1)));
        }
        return entries;
    }

    /**
     * Marks a once-per-slot job's slot complete (see {@code slot-mark.lua}); the times are epoch
     * milliseconds. A fenced call: await it with {@link FencedWrites#await}.
     *
     * @return the script's reply: 1 marked, 2 not newer, 0 a newer term exists, -1 lease lost
     */
    CompletableFuture<Long> markSlot(
            long token, String ledgerKey, long slot, long completedAt, long start) {
        checkToken(token);
        return runner.run(
                Scripts.SLOT_MARK,
                List.of(markKey, leaseKey.get(0), ledgerKey),
                List.of(
                        Long.toString(token),
                        instanceId,
                        Long.toString(slot),
                        Long.toString(completedAt),
                        Long.toString(start)));
    }

    /**
     * Pauses or resumes a once-per-slot job (see {@code slot-pause.lua}); not fenced: any instance
     * may.
     *
     * @return whether the state changed
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    boolean pauseLedger(String ledgerKey, boolean pause, long at) {
        Object reply =
                redis.execute(
                        Scripts.SLOT_PAUSE,
                        STRING,
                        (RedisSerializer) STRING,
                        List.of(ledgerKey),
                        pause ? "1" : "0",
                        Long.toString(at));
        return reply != null && asLong(reply) == 1;
    }

    // Helpers.

    static void checkToken(long token) {
        if (token >= MAX_TOKEN) {
            throw new IllegalArgumentException(
                    "redlease: token must be below 2^53 (" + MAX_TOKEN + "), got " + token);
        }
    }

    static <T> T required(@Nullable T value, String argument) {
        if (value == null) {
            throw new IllegalArgumentException("redlease: " + argument + " must not be null");
        }
        return value;
    }

    /** Throws unless the operations' key serializer writes String keys as plain UTF-8. */
    @SuppressWarnings("unchecked")
    static void requirePlainKeys(RedisOperations<String, String> redis) {
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

    private static boolean isOne(@Nullable Object reply) {
        return reply != null && asLong(reply) == 1L;
    }

    /** Returns a reply element as text: runners return bulk strings as bytes or as strings. */
    static String text(@Nullable Object value) {
        return value instanceof byte[] bytes
                ? new String(bytes, StandardCharsets.UTF_8)
                : String.valueOf(value);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static @Nullable String asString(@Nullable Object value) {
        if (value instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        return value == null ? null : value.toString();
    }

    static long asLong(@Nullable Object value) {
        if (value instanceof Long number) {
            return number;
        }
        if (value instanceof byte[] bytes) {
            return Long.parseLong(new String(bytes, StandardCharsets.UTF_8));
        }
        return Long.parseLong(String.valueOf(value));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static RedisSerializer<List<Object>> listReader() {
        return (RedisSerializer) STRING;
    }

    /**
     * The outcome of one acquire attempt: a won token, or 0, the holder's remaining time and the
     * holder's instance id (null when the lease is free and a higher-ranked candidate is
     * preferred).
     */
    record AcquireReply(long token, long holderTtlMillis, @Nullable String holder) {}
}
