package io.redlease.core;

import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * This instance's candidacy under a {@link Preference}: after every successful round trip of the
 * engine (an acquire attempt or a renewal) it heartbeats its rank and readiness beside the lease,
 * and, while it leads, resigns once per term when a live, ready candidate ranks strictly higher.
 * The acquire gate itself is in the engine's acquire script ({@link LeaseProtocol#acquire()}).
 *
 * <p>An entry lives {@link #lifetime} after its heartbeat, so a candidate that crashes or stops
 * heartbeating stops counting by then.
 *
 * <p>As an {@link Observer} it runs on the election's callback lane, never on the engine's threads,
 * with one round trip per heartbeat; a failure is reported by the lane (logged at WARN) and the
 * entry lapses one time to live after the last heartbeat.
 */
final class Candidacy implements Observer {

    private static final RedisSerializer<String> STRING = RedisSerializer.string();

    private static final BooleanSupplier ALWAYS_READY = () -> true;

    private final RedisOperations<String, String> redis;

    private final LeaseProtocol protocol;

    private final Elector elector;

    private final List<String> candidatesKey;

    private final String lifetimeMillis;

    /** The longest round trip that still counts as a heartbeat: the acquire timeout. */
    private final Duration fastEnough;

    private volatile @Nullable Preference preference;

    private volatile BooleanSupplier ready = ALWAYS_READY;

    /** The token of the current term, or 0 between terms. */
    private volatile long token;

    /** The term that has already resigned for a higher candidate, so it does so once. */
    private volatile long handedOver;

    Candidacy(RedisOperations<String, String> redis, LeaseProtocol protocol, Elector elector) {
        this.redis = redis;
        this.protocol = protocol;
        this.elector = elector;
        this.candidatesKey = List.of(Preference.candidatesKey(elector.name()));
        this.lifetimeMillis = Long.toString(lifetime(elector.config()).toMillis());
        this.fastEnough = elector.config().acquireTimeout();
    }

    /**
     * Returns how long an entry lives after a heartbeat: one time to live when the instance polls
     * at its acquire interval (lease-aware scheduling off) and that leaves half a time to live for
     * a late heartbeat; else one and a half, since a lease-aware follower may sleep a whole time to
     * live between attempts.
     */
    static Duration lifetime(ElectorConfig config) {
        Duration ttl = config.ttl();
        Duration slack = ttl.dividedBy(2);
        if (config.leaseAwareScheduling()) {
            return ttl.plus(slack);
        }
        Duration needed = config.acquireInterval().plus(slack);
        return needed.compareTo(ttl) > 0 ? needed : ttl;
    }

    void prefer(@Nullable Preference preference, @Nullable BooleanSupplier ready) {
        this.ready = ready == null ? ALWAYS_READY : ready;
        this.preference = preference;
        protocol.preferenceRank(preference == null ? null : preference.rank());
        if (preference == null) {
            execute(Scripts.CANDIDATE_REMOVE, elector.instanceId());
        }
    }

    @Nullable Preference preference() {
        return preference;
    }

    /** Removes this instance's entry once its run has ended (a follower's too), if it has one. */
    void withdraw() {
        if (preference != null && !elector.isRunning()) {
            execute(Scripts.CANDIDATE_REMOVE, elector.instanceId());
        }
    }

    @Override
    public void onElected(long token) {
        this.token = token;
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        token = 0;
        if (reason == StepDownReason.SHUTDOWN && preference != null) {
            // A candidate that stops no longer holds others back.
            execute(Scripts.CANDIDATE_REMOVE, elector.instanceId());
        }
    }

    @Override
    public void onRoundTrip(Operation operation, Duration duration, boolean succeeded) {
        Preference own = preference;
        if (own == null
                || !succeeded
                || (operation != Operation.ACQUIRE && operation != Operation.RENEW)
                || duration.compareTo(fastEnough) > 0
                || !elector.isRunning()) {
            // A round trip slower than an acquire may take (the first acquire of a run may take
            // up to the time to live) is no heartbeat: on such a link the instance's acquires run
            // past their bound and its terms never start, so it must not be handed the lease.
            return;
        }
        String best =
                execute(
                        Scripts.CANDIDATE_HEARTBEAT,
                        elector.instanceId(),
                        lifetimeMillis,
                        isReady() ? "1" : "0",
                        own.rank());
        long term = token;
        if (best != null && term > 0 && handedOver != term && best.compareTo(own.rank()) > 0) {
            handedOver = term;
            elector.resign();
        }
    }

    private boolean isReady() {
        try {
            return ready.getAsBoolean();
        } catch (RuntimeException ex) {
            return false;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T> @Nullable T execute(
            org.springframework.data.redis.core.script.RedisScript<T> script, String... args) {
        return (T)
                redis.execute(
                        script, STRING, (RedisSerializer) STRING, candidatesKey, (Object[]) args);
    }

    @Override
    public String toString() {
        return "Candidacy[" + candidatesKey.get(0) + "]";
    }
}
