package io.redlease.boot.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters for redlease elections, fed by an {@link Observer} per election.
 *
 * <p>Every meter carries the tag {@value #TAG_NAME} (the election name); none carries a token or an
 * instance id. All are registered as soon as both the registry and the election are known:
 *
 * <ul>
 *   <li>{@value #LEADER}: gauge, 1 while this instance leads, else 0;
 *   <li>{@value #ELECTIONS}: counter of terms won;
 *   <li>{@value #STEPDOWNS}: counter of terms ended, tag {@value #TAG_REASON} (lost, expired,
 *       resigned, task-ended, task-failed, shutdown);
 *   <li>{@value #ERRORS}: counter of handled errors, tag {@value #TAG_OPERATION} (acquire, renew,
 *       release, task);
 *   <li>{@value #FENCE_WRITES}: counter of fenced writes, tag {@value #TAG_RESULT} (applied,
 *       rejected) and tag {@value #TAG_STORE}: {@value #STORE_REDIS} for writes through the {@code
 *       Fencer}, {@value #STORE_JDBC} for fenced JDBC transactions (registered once {@link
 *       #fencedWrite} reports the store);
 *   <li>{@value #FENCE_CLAIMS}: counter of a newly elected term's claims of its row in a fence
 *       table, tag {@value #TAG_RESULT} (claimed, failed: an attempt that failed and is retried),
 *       registered once {@link #registerFenceClaims} or {@link #fenceClaim} names the election;
 *   <li>{@value #REDIS_CALLS}: timer of Redis calls, tag {@value #TAG_OPERATION} (acquire, renew,
 *       release: the engine's round trips, with tag {@value #TAG_OUTCOME} success or failure, a
 *       call the engine stopped waiting for counting as a failure; fenced-write: writes through the
 *       {@code Fencer}, with tag {@value #TAG_OUTCOME} applied or rejected), so Redis slowness
 *       shows before it costs leadership;
 *   <li>{@value #LEASE_AGE}: gauge, seconds since this instance's lease was last confirmed (won, or
 *       a renewal sent that Redis accepted), 0 when not leading; near the time to live it says
 *       renewals are late;
 *   <li>{@value #LEASE_TTL}: gauge, the election's lease time to live in seconds, registered once
 *       {@link #leaseTtl} reports it, so that alerts can compare times with it;
 *   <li>{@value #LEASE_HELD}: gauge, 1 while this instance sees a valid lease held by anyone
 *       (itself, another instance, or one that exports nothing such as a Go instance), else 0; read
 *       from {@link Elector#leaseHeld()}, which takes it from the elector's own acquire and renew
 *       replies (no extra Redis call), so every instance, leader or follower, tells whether the
 *       election has a leader. Follows {@value #LEADER} until {@link #lease} names the elector.
 * </ul>
 */
public final class RedleaseMetrics implements MeterBinder {

    /** Gauge: 1 while this instance leads the election, else 0. */
    public static final String LEADER = "redlease.leader";

    /** Counter: terms this instance won. */
    public static final String ELECTIONS = "redlease.elections";

    /** Counter: terms of this instance that ended, by reason. */
    public static final String STEPDOWNS = "redlease.stepdowns";

    /** Counter: handled errors, by operation. */
    public static final String ERRORS = "redlease.errors";

    /** Counter: fenced writes, by result. */
    public static final String FENCE_WRITES = "redlease.fence.writes";

    /** Counter: claims of fence table rows by newly elected terms, by result. */
    public static final String FENCE_CLAIMS = "redlease.fence.claims";

    /** Timer: Redis calls of the election, by operation and outcome. */
    public static final String REDIS_CALLS = "redlease.redis.calls";

    /** Gauge: seconds since this instance's lease was last confirmed, 0 when not leading. */
    public static final String LEASE_AGE = "redlease.lease.age";

    /** Gauge: the election's lease time to live, in seconds. */
    public static final String LEASE_TTL = "redlease.lease.ttl";

    /** Gauge: 1 while this instance sees a valid lease held by anyone, else 0. */
    public static final String LEASE_HELD = "redlease.lease.held";

    /** Tag of {@value #REDIS_CALLS}: success, failure, applied or rejected. */
    public static final String TAG_OUTCOME = "outcome";

    /** Tag: the election name. */
    public static final String TAG_NAME = "name";

    /** Tag of {@value #STEPDOWNS}: why the term ended. */
    public static final String TAG_REASON = "reason";

    /** Tag of {@value #ERRORS}: what failed. */
    public static final String TAG_OPERATION = "operation";

    /** Tag of {@value #FENCE_WRITES}: applied or rejected. */
    public static final String TAG_RESULT = "result";

    /** Tag of {@value #FENCE_WRITES}: the fenced store. */
    public static final String TAG_STORE = "store";

    /** Store of writes through the {@code Fencer}. */
    public static final String STORE_REDIS = "redis";

    /** Store of fenced JDBC transactions. */
    public static final String STORE_JDBC = "jdbc";

    private final Map<String, ElectionMeters> elections = new ConcurrentHashMap<>();

    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    /**
     * Returns the observer that feeds the meters of one election.
     *
     * @param electionName the election name, used as the {@value #TAG_NAME} tag
     * @return the observer; the same one for the same name
     */
    public Observer observer(String electionName) {
        ElectionMeters meters = elections.computeIfAbsent(electionName, ElectionMeters::new);
        registries.forEach(meters::register);
        return meters;
    }

    /**
     * Counts a fenced write to a store other than Redis (Redis writes arrive through the observer);
     * the first report of a store registers its applied and rejected counters.
     *
     * @param electionName the election name
     * @param store the store, such as {@value #STORE_JDBC}
     * @param applied whether the write was applied (false: rejected as stale)
     */
    public void fencedWrite(String electionName, String store, boolean applied) {
        FenceCounts counts = store(electionName, store);
        (applied ? counts.applied : counts.rejected).incrementAndGet();
    }

    /**
     * Registers the {@value #FENCE_WRITES} counters of a store for an election, at zero, before its
     * first write.
     *
     * @param electionName the election name
     * @param store the store, such as {@value #STORE_JDBC}
     */
    public void registerStore(String electionName, String store) {
        store(electionName, store);
    }

    /**
     * Counts a newly elected term's claim of its row in a fence table: claimed, or an attempt that
     * failed and is retried.
     *
     * @param electionName the election name
     * @param claimed whether the claim succeeded
     */
    public void fenceClaim(String electionName, boolean claimed) {
        FenceCounts counts = claims(electionName);
        (claimed ? counts.applied : counts.rejected).incrementAndGet();
    }

    /**
     * Registers the {@value #FENCE_CLAIMS} counters of an election, at zero.
     *
     * @param electionName the election name
     */
    public void registerFenceClaims(String electionName) {
        claims(electionName);
    }

    /**
     * Registers the {@value #LEASE_TTL} gauge of an election.
     *
     * @param electionName the election name
     * @param ttl the lease time to live
     */
    public void leaseTtl(String electionName, Duration ttl) {
        elections.computeIfAbsent(electionName, ElectionMeters::new).ttl(ttl, registries);
    }

    /**
     * Registers the {@value #LEASE_TTL} gauge of an elector's election, and takes the {@value
     * #LEASE_AGE} of its leases from the elector itself (the send time of the last renewal that
     * moved its deadline), so a slow observer on the callback lane does not age a healthy lease.
     *
     * @param elector the elector
     */
    public void lease(Elector elector) {
        ElectionMeters meters = elections.computeIfAbsent(elector.name(), ElectionMeters::new);
        meters.elector = elector;
        meters.ttl(elector.config().ttl(), registries);
    }

    private FenceCounts claims(String electionName) {
        return elections.computeIfAbsent(electionName, ElectionMeters::new).claims(registries);
    }

    private FenceCounts store(String electionName, String store) {
        return elections
                .computeIfAbsent(electionName, ElectionMeters::new)
                .store(store, registries);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        registries.add(registry);
        elections.values().forEach(meters -> meters.register(registry));
    }

    /** Applied and rejected fenced writes to one store. */
    private static final class FenceCounts {

        final AtomicLong applied = new AtomicLong();

        final AtomicLong rejected = new AtomicLong();
    }

    /** The counts of one election, registered with each registry as function meters. */
    private static final class ElectionMeters implements Observer {

        private final String name;

        private final AtomicInteger leader = new AtomicInteger();

        private final AtomicLong won = new AtomicLong();

        private final Map<StepDownReason, AtomicLong> stepdowns =
                new EnumMap<>(StepDownReason.class);

        private final Map<Operation, AtomicLong> errors = new EnumMap<>(Operation.class);

        private final Map<String, FenceCounts> stores = new ConcurrentHashMap<>();

        private volatile @Nullable FenceCounts claims;

        private volatile @Nullable Duration ttl;

        /** When the lease was last confirmed ({@link System#nanoTime}), or 0 when not leading. */
        private final AtomicLong confirmed = new AtomicLong();

        /** Per registry, the timers by operation and outcome, e.g. {@code renew/success}. */
        private final List<Map<String, Timer>> timers = new CopyOnWriteArrayList<>();

        ElectionMeters(String name) {
            this.name = name;
            for (StepDownReason reason : StepDownReason.values()) {
                stepdowns.put(reason, new AtomicLong());
            }
            for (Operation operation : Operation.values()) {
                errors.put(operation, new AtomicLong());
            }
            stores.put(STORE_REDIS, new FenceCounts());
        }

        FenceCounts store(String store, List<MeterRegistry> registries) {
            FenceCounts counts = stores.get(store);
            if (counts == null) {
                counts = stores.computeIfAbsent(store, ignored -> new FenceCounts());
                for (MeterRegistry registry : registries) {
                    registerFenceWrites(registry, store, counts);
                }
            }
            return counts;
        }

        synchronized FenceCounts claims(List<MeterRegistry> registries) {
            FenceCounts counts = claims;
            if (counts == null) {
                counts = new FenceCounts();
                claims = counts;
                for (MeterRegistry registry : registries) {
                    registerClaims(registry, counts);
                }
            }
            return counts;
        }

        synchronized void ttl(Duration value, List<MeterRegistry> registries) {
            boolean first = ttl == null;
            ttl = value;
            if (first) {
                registries.forEach(this::registerTtl);
            }
        }

        private void registerTtl(MeterRegistry registry) {
            Gauge.builder(LEASE_TTL, this, meters -> seconds(meters.ttl))
                    .tag(TAG_NAME, name)
                    .description("Time to live of the election's lease")
                    .baseUnit("seconds")
                    .register(registry);
        }

        private static double seconds(@Nullable Duration duration) {
            return duration == null ? 0 : duration.toNanos() / 1e9;
        }

        /** The elector whose term tells the lease's age, once known. */
        private volatile @Nullable Elector elector;

        /** Returns 1 when a valid lease is held by anyone, as the elector sees it, else 0. */
        double leaseHeld() {
            Elector source = elector;
            if (source == null) {
                return leader.get();
            }
            return source.leaseHeld() ? 1 : 0;
        }

        /** Returns the seconds since the lease was last confirmed, or 0 when not leading. */
        double leaseAge() {
            Elector source = elector;
            Duration full = ttl;
            if (source != null && full != null) {
                return source.term()
                        .map(term -> seconds(full.minus(term.remaining())))
                        .map(age -> Math.max(0, age))
                        .orElse(0.0);
            }
            long at = confirmed.get();
            return at == 0 ? 0 : Math.max(0, System.nanoTime() - at) / 1e9;
        }

        private void registerClaims(MeterRegistry registry, FenceCounts counts) {
            counter(registry, FENCE_CLAIMS, counts.applied, "Fence row claims", "claims")
                    .tag(TAG_RESULT, "claimed")
                    .register(registry);
            counter(registry, FENCE_CLAIMS, counts.rejected, "Fence row claims", "claims")
                    .tag(TAG_RESULT, "failed")
                    .register(registry);
        }

        private void registerFenceWrites(MeterRegistry registry, String store, FenceCounts counts) {
            counter(registry, FENCE_WRITES, counts.applied, "Fenced writes", "writes")
                    .tag(TAG_RESULT, "applied")
                    .tag(TAG_STORE, store)
                    .register(registry);
            counter(registry, FENCE_WRITES, counts.rejected, "Fenced writes", "writes")
                    .tag(TAG_RESULT, "rejected")
                    .tag(TAG_STORE, store)
                    .register(registry);
        }

        void register(MeterRegistry registry) {
            Gauge.builder(LEADER, leader, AtomicInteger::get)
                    .tag(TAG_NAME, name)
                    .description("Whether this instance leads the election (1) or not (0)")
                    .register(registry);
            counter(registry, ELECTIONS, won, "Terms this instance won", "terms")
                    .register(registry);
            stepdowns.forEach(
                    (reason, count) ->
                            counter(
                                            registry,
                                            STEPDOWNS,
                                            count,
                                            "Terms of this instance that ended",
                                            "terms")
                                    .tag(TAG_REASON, reason.tagValue())
                                    .register(registry));
            errors.forEach(
                    (operation, count) ->
                            counter(registry, ERRORS, count, "Errors the elector handled", "errors")
                                    .tag(TAG_OPERATION, operation.name().toLowerCase(Locale.ROOT))
                                    .register(registry));
            stores.forEach((store, counts) -> registerFenceWrites(registry, store, counts));
            FenceCounts claimCounts = claims;
            if (claimCounts != null) {
                registerClaims(registry, claimCounts);
            }
            Gauge.builder(LEASE_HELD, this, ElectionMeters::leaseHeld)
                    .tag(TAG_NAME, name)
                    .description(
                            "Whether this instance sees a valid lease held by anyone (1) or not"
                                    + " (0)")
                    .register(registry);
            Gauge.builder(LEASE_AGE, this, ElectionMeters::leaseAge)
                    .tag(TAG_NAME, name)
                    .description(
                            "Time since this instance's lease was last confirmed, 0 when not"
                                    + " leading")
                    .baseUnit("seconds")
                    .register(registry);
            if (ttl != null) {
                registerTtl(registry);
            }
            Map<String, Timer> byCall = new HashMap<>();
            for (String operation : List.of("acquire", "renew", "release")) {
                for (String outcome : List.of("success", "failure")) {
                    byCall.put(operation + "/" + outcome, timer(registry, operation, outcome));
                }
            }
            for (String outcome : List.of("applied", "rejected")) {
                byCall.put("fenced-write/" + outcome, timer(registry, "fenced-write", outcome));
            }
            timers.add(byCall);
        }

        private Timer timer(MeterRegistry registry, String operation, String outcome) {
            return Timer.builder(REDIS_CALLS)
                    .tag(TAG_NAME, name)
                    .tag(TAG_OPERATION, operation)
                    .tag(TAG_OUTCOME, outcome)
                    .description("Redis calls of the election, round trip included")
                    .register(registry);
        }

        private void record(String call, Duration duration) {
            for (Map<String, Timer> byCall : timers) {
                Timer timer = byCall.get(call);
                if (timer != null) {
                    timer.record(duration);
                }
            }
        }

        private FunctionCounter.Builder<AtomicLong> counter(
                MeterRegistry registry,
                String meter,
                AtomicLong count,
                String description,
                String unit) {
            return FunctionCounter.builder(meter, count, AtomicLong::doubleValue)
                    .tag(TAG_NAME, name)
                    .description(description)
                    .baseUnit(unit);
        }

        @Override
        public void onElected(long token) {
            won.incrementAndGet();
            confirmed.set(nonZero(System.nanoTime()));
            leader.set(1);
        }

        private static long nonZero(long nanos) {
            return nanos == 0 ? 1 : nanos;
        }

        @Override
        public void onSteppedDown(StepDownReason reason) {
            leader.set(0);
            confirmed.set(0);
            stepdowns.get(reason).incrementAndGet();
        }

        @Override
        public void onError(Operation operation, Throwable error) {
            errors.get(operation).incrementAndGet();
        }

        @Override
        public void onFencedWrite(boolean wasApplied, Duration duration) {
            FenceCounts redis = stores.get(STORE_REDIS);
            (wasApplied ? redis.applied : redis.rejected).incrementAndGet();
            if (!duration.isZero()) {
                record("fenced-write/" + (wasApplied ? "applied" : "rejected"), duration);
            }
        }

        @Override
        public void onRoundTrip(Operation operation, Duration duration, boolean succeeded) {
            if (operation == Operation.RENEW && succeeded) {
                // The renewal was sent this long ago; a renewal that found the term over is
                // followed by the step-down, which clears the age.
                confirmed.getAndUpdate(
                        at -> at == 0 ? 0 : nonZero(System.nanoTime() - duration.toNanos()));
            }
            record(
                    operation.name().toLowerCase(Locale.ROOT)
                            + "/"
                            + (succeeded ? "success" : "failure"),
                    duration);
        }

        @Override
        public String toString() {
            return "RedleaseMetrics[" + name + "]";
        }
    }
}
