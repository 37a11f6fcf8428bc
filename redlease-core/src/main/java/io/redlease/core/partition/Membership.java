package io.redlease.core.partition;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * This instance's entry in a partitioned election's member set, and its view of the other members.
 *
 * <p>The set {@code {<name>}:members} holds each live instance's id scored by when its entry
 * expires, in Redis server time, so instances with skewed clocks agree on who is alive. Each
 * refresh pushes this instance's expiry one time to live ahead and drops the members whose expiry
 * passed: an instance that stops refreshing leaves one time to live after its last refresh.
 *
 * <p>Hysteresis: a member first seen after this instance's first look counts only once it has been
 * seen for the settle period without a gap; members present at the first look count at once. Not
 * thread-safe: one balancing thread refreshes it.
 */
final class Membership {

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static final RedisScript<List<Object>> MEMBERS =
            RedisScript.of(load("members.lua"), (Class) List.class);

    private static final RedisSerializer<String> STRING = RedisSerializer.string();

    private final RedisOperations<String, String> redis;

    private final List<String> key;

    private final String instanceId;

    private final String ttlMillis;

    private final long settleNanos;

    private final long joinNanos;

    private final LongSupplier clock;

    private final Map<String, Long> firstSeen = new HashMap<>();

    private long joinedSince;

    private boolean looked;

    private boolean joined;

    private volatile List<String> live = List.of();

    Membership(
            RedisOperations<String, String> redis,
            String name,
            String instanceId,
            Duration ttl,
            Duration settle,
            Duration join,
            LongSupplier clock) {
        this.redis = redis;
        this.key = List.of(membersKey(name));
        this.instanceId = instanceId;
        this.ttlMillis = Long.toString(ttl.toMillis());
        this.settleNanos = settle.toNanos();
        this.joinNanos = join.toNanos();
        this.clock = clock;
    }

    static String membersKey(String name) {
        return "{" + name + "}:members";
    }

    /**
     * Refreshes this instance's entry and returns the members that count for balancing: sorted,
     * this instance included.
     *
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    List<String> refresh() {
        List<String> members = call(ttlMillis);
        live = members;
        long now = clock.getAsLong();
        if (!looked) {
            joinedSince = now;
            looked = true;
        }
        boolean joining = !joined;
        firstSeen.keySet().retainAll(members);
        List<String> counted = new ArrayList<>();
        for (String member : members) {
            long since = firstSeen.computeIfAbsent(member, m -> joining ? Long.MIN_VALUE : now);
            if (member.equals(instanceId)
                    || since == Long.MIN_VALUE
                    || now - since >= settleNanos) {
                counted.add(member);
            }
        }
        if (now - joinedSince >= joinNanos) {
            joined = true;
        }
        if (!counted.contains(instanceId)) {
            counted.add(instanceId);
        }
        counted.sort(null);
        return counted;
    }

    /** Removes this instance's entry, so the others count it out at their next look. */
    void leave() {
        live = call("0");
        firstSeen.clear();
        looked = false;
        joined = false;
    }

    /**
     * Returns whether this instance has finished joining: its first settle period has passed, so it
     * has seen the members that started with it.
     */
    boolean joined() {
        return joined;
    }

    /**
     * Returns the live members as of the last refresh, sorted; the new ones not yet counted too.
     */
    List<String> live() {
        return live;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private List<String> call(String ttl) {
        List<Object> reply =
                redis.execute(MEMBERS, STRING, (RedisSerializer) STRING, key, instanceId, ttl);
        List<String> members = new ArrayList<>();
        if (reply != null) {
            for (Object member : reply) {
                members.add(String.valueOf(member));
            }
        }
        members.sort(null);
        return List.copyOf(members);
    }

    private static String load(String name) {
        try (InputStream in = Membership.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("redlease: script resource missing: " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException("redlease: cannot read script " + name, ex);
        }
    }
}
