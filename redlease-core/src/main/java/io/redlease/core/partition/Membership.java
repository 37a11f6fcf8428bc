package io.redlease.core.partition;

import io.redlease.core.ReleaseWatch;
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
 * <p>The script announces a join (this instance added) or a leave (removed) on {@link #announcer}'s
 * release channel; the others' balancing threads hear it on their release watch and look at once,
 * so a newcomer starts settling as soon as it has joined, not at the others' next round.
 *
 * <p>Hysteresis: a member first seen after this instance's first look counts only once it has been
 * seen for the settle period without a gap; members present at the first look count at once. A
 * member that drops out (leaves, or its entry lapses) and comes back within {@value
 * #REJOIN_MEMORY_TTLS} times to live of dropping out is a flapping member: it counts only once seen
 * for a whole time to live (or the settle period, if longer), so a short settle period makes joins
 * fast without letting a member that comes and goes move partitions back and forth. Not
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

    private final String announcements;

    /** How many times to live a member's departure is remembered, to tell a rejoin. */
    static final int REJOIN_MEMORY_TTLS = 10;

    private final long settleNanos;

    private final long rejoinSettleNanos;

    private final long rejoinMemoryNanos;

    private final long joinNanos;

    private final LongSupplier clock;

    /** The members seen without a gap since, by the time each counts from. */
    private final Map<String, Long> countsFrom = new HashMap<>();

    /** The members that dropped out recently, by when this instance noticed. */
    private final Map<String, Long> departed = new HashMap<>();

    private long joinedSince;

    private long lastRefresh;

    private boolean looked;

    private boolean joined;

    private volatile List<String> live = List.of();

    /** Set by {@link #removeEntry()}: the view of the members is forgotten at the next refresh. */
    private volatile boolean stale;

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
        this.announcements = ReleaseWatch.channel(announcer(name));
        this.settleNanos = settle.toNanos();
        this.rejoinSettleNanos = Math.max(settleNanos, ttl.toNanos());
        this.rejoinMemoryNanos = REJOIN_MEMORY_TTLS * ttl.toNanos();
        this.joinNanos = join.toNanos();
        this.clock = clock;
    }

    static String membersKey(String name) {
        return "{" + name + "}:members";
    }

    /**
     * Returns the name under which members announce their joins and leaves: the release channel of
     * this name carries the id of each instance added to or removed from the member set, so the
     * others look at once. It sits beside the partitions' elections ({@code {<name>:p-members}}
     * beside {@code {<name>:p7}}), inside the channels the partitions' ACL rules already allow, and
     * no partition has that name.
     */
    static String announcer(String name) {
        return "{" + name + ":p-members}";
    }

    /**
     * Refreshes this instance's entry and returns the members that count for balancing: sorted,
     * this instance included.
     *
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    List<String> refresh() {
        if (stale) {
            forget();
        }
        List<String> members = call(ttlMillis);
        live = members;
        long now = clock.getAsLong();
        lastRefresh = now;
        if (!looked) {
            joinedSince = now;
            looked = true;
        }
        boolean joining = !joined;
        for (String gone : countsFrom.keySet()) {
            if (!members.contains(gone)) {
                departed.put(gone, now);
            }
        }
        countsFrom.keySet().retainAll(members);
        departed.values().removeIf(since -> now - since >= rejoinMemoryNanos);
        List<String> counted = new ArrayList<>();
        for (String member : members) {
            long from =
                    countsFrom.computeIfAbsent(
                            member,
                            m ->
                                    joining
                                            ? Long.MIN_VALUE
                                            : now
                                                    + (departed.remove(m) != null
                                                            ? rejoinSettleNanos
                                                            : settleNanos));
            if (member.equals(instanceId) || from == Long.MIN_VALUE || now - from >= 0) {
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

    /**
     * Returns how long after the last refresh the first member still settling will count, or {@link
     * Long#MAX_VALUE} when none is settling: a round then, rather than up to a balance interval
     * later, lets a newcomer's share go as soon as it counts.
     */
    long untilNextCounts() {
        long soonest = Long.MAX_VALUE;
        for (long from : countsFrom.values()) {
            if (from != Long.MIN_VALUE && from - lastRefresh > 0) {
                soonest = Math.min(soonest, from - lastRefresh);
            }
        }
        return soonest;
    }

    /**
     * Returns how long after the last refresh this instance finishes joining, or {@link
     * Long#MAX_VALUE} once it has: a round then, so that a round woken meanwhile (another member's
     * join heard) does not put the first campaign off by a balance interval.
     */
    long untilJoined() {
        return joined ? Long.MAX_VALUE : Math.max(1, joinedSince + joinNanos - lastRefresh);
    }

    /** Removes this instance's entry, so the others count it out at their next look. */
    void leave() {
        live = call("0");
        forget();
    }

    /** Forgets the view of the members, as a leave does. On the balancing thread. */
    private void forget() {
        stale = false;
        countsFrom.clear();
        departed.clear();
        looked = false;
        joined = false;
    }

    /**
     * Removes this instance's entry for a stop whose balancing thread is held up: safe to call from
     * another thread, as it touches only what other threads read ({@link #live()}, emptied first,
     * so even a removal that fails leaves no stale view); the rest of the view is forgotten at the
     * next refresh, on the next run's balancing thread.
     */
    void removeEntry() {
        live = List.of();
        stale = true;
        call("0");
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
                redis.execute(
                        MEMBERS,
                        STRING,
                        (RedisSerializer) STRING,
                        key,
                        instanceId,
                        ttl,
                        announcements);
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
