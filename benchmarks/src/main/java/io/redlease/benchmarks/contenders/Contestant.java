package io.redlease.benchmarks.contenders;

import java.time.Duration;

/**
 * A leader-election implementation under test, with its settings; see {@code docs/benchmarks.md}
 * for the mapping of "normalised" settings onto each library.
 */
public enum Contestant {

    /** redlease with its defaults: TTL 5 s, renew every TTL/3, lease-aware polling every TTL/2. */
    REDLEASE("redlease", "redlease (defaults)", Duration.ofSeconds(5)),

    /**
     * redlease behaving like the Go library: lease-aware scheduling off (and release notifications
     * off, once core has that option); TTL 5 s.
     */
    REDLEASE_GO("redlease-go", "redlease, Go-library mode", Duration.ofSeconds(5)),

    /**
     * Spring Integration's {@code LockRegistryLeaderInitiator} on a {@code RedisLockRegistry} with
     * their defaults: lock TTL ({@code expireAfter}) 60 s, heart beat 500 ms, spin lock retried
     * every 100 ms.
     */
    SPRING_INTEGRATION("si", "Spring Integration (defaults)", Duration.ofSeconds(60)),

    /** The same with the lock TTL normalised to 5 s; heart beat and spin interval unchanged. */
    SPRING_INTEGRATION_5S("si-5s", "Spring Integration, TTL 5 s", Duration.ofSeconds(5)),

    /**
     * Redisson's {@code RLock} held as a leader lease with its defaults: watchdog timeout 30 s,
     * renewed every 10 s; waiters wake on the unlock message or when the lock's TTL lapses.
     */
    REDISSON("redisson", "Redisson RLock (defaults)", Duration.ofSeconds(30)),

    /** The same with the watchdog timeout normalised to 5 s (renewed every 5/3 s). */
    REDISSON_5S("redisson-5s", "Redisson RLock, TTL 5 s", Duration.ofSeconds(5));

    /** The lease time to live every normalised contestant uses: redlease's default. */
    public static final Duration NORMALISED_TTL = Duration.ofSeconds(5);

    /** Spring Integration's registry key; lock keys are {@code <registry key>:<name>}. */
    static final String SI_REGISTRY_KEY = "si-bench";

    private final String id;

    private final String label;

    private final Duration ttl;

    Contestant(String id, String label, Duration ttl) {
        this.id = id;
        this.label = label;
        this.ttl = ttl;
    }

    /** Returns the short id used on command lines and in file names. */
    public String id() {
        return id;
    }

    /** Returns the label used in tables and charts. */
    public String label() {
        return label;
    }

    /** Returns the lease (lock) time to live this contestant runs with. */
    public Duration ttl() {
        return ttl;
    }

    /** Returns the Redis key that holds the lease of the named election. */
    public String leaseKey(String name) {
        return switch (this) {
            case REDLEASE, REDLEASE_GO -> name + ":leader";
            case SPRING_INTEGRATION, SPRING_INTEGRATION_5S -> SI_REGISTRY_KEY + ":" + name;
            case REDISSON, REDISSON_5S -> name;
        };
    }

    /**
     * Returns how long a follower may go between two looks at the lease when nothing tells it the
     * lease was released: the span over which the benchmarks randomise the moment of a hand-off.
     */
    public Duration pollPeriod() {
        return switch (this) {
            case REDLEASE, REDLEASE_GO -> ttl.dividedBy(2);
            case SPRING_INTEGRATION, SPRING_INTEGRATION_5S -> Duration.ofMillis(500);
            case REDISSON, REDISSON_5S -> Duration.ofMillis(500);
        };
    }

    /** Returns the contestant with the given id. */
    public static Contestant of(String id) {
        for (Contestant contestant : values()) {
            if (contestant.id.equals(id)) {
                return contestant;
            }
        }
        throw new IllegalArgumentException("unknown contestant " + id);
    }
}
