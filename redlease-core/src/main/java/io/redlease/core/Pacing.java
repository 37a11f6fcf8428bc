package io.redlease.core;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * When a run looks at the lease next: a follower's delay, and the back-off after errors, which
 * doubles from the acquire interval up to the TTL and is reset by any reply. Every delay is
 * shortened by a random amount of up to 10 % (never lengthened), so followers spread out. Confined
 * to the run's loop thread.
 */
final class Pacing {

    private static final long ONE_MILLISECOND = TimeUnit.MILLISECONDS.toNanos(1);

    private final ElectorConfig config;

    private final long ttl;

    private final long acquireInterval;

    private final ExponentialBackOff backOff;

    private @Nullable BackOffExecution execution;

    Pacing(ElectorConfig config) {
        this.config = config;
        this.ttl = config.ttl().toNanos();
        this.acquireInterval = config.acquireInterval().toNanos();
        this.backOff = new ExponentialBackOff(config.acquireInterval().toMillis(), 2);
        backOff.setMaxInterval(config.ttl().toMillis());
    }

    /** Returns a jittered acquire interval: the plain poll. */
    long poll() {
        return jitter(acquireInterval);
    }

    /**
     * Returns how long a follower waits. With lease-aware scheduling it looks again when the
     * holder's lease would lapse: at once when that is sooner than the acquire interval, and, while
     * releases are announced to it, even when that is later, up to its own time to live (a graceful
     * release wakes it at once; a crashed holder's lease lapses then). Otherwise it polls.
     */
    long followerDelay(long holderTtlMillis, boolean hearsReleases) {
        if (config.leaseAwareScheduling() && holderTtlMillis >= 0) {
            long lapse = TimeUnit.MILLISECONDS.toNanos(holderTtlMillis + 1);
            if (lapse < acquireInterval) {
                return lapse;
            }
            if (hearsReleases) {
                // Capped one millisecond past its own time to live, so that a holder with the
                // same TTL that has just renewed is looked at once its lease lapses, not before.
                return Math.min(lapse, ttl + ONE_MILLISECOND);
            }
        }
        return poll();
    }

    /** Returns the next delay after an error, jittered, and doubles the one after it. */
    long afterError() {
        BackOffExecution current = execution;
        if (current == null) {
            current = backOff.start();
            execution = current;
        }
        return jitter(TimeUnit.MILLISECONDS.toNanos(current.nextBackOff()));
    }

    /** A reply came: the next error starts from the acquire interval again. */
    void reset() {
        execution = null;
    }

    /** Returns whether errors have stretched the delays. */
    boolean backingOff() {
        return execution != null;
    }

    /** Shortens a delay by a random amount of up to 10 %, never lengthens it. */
    static long jitter(long nanos) {
        return nanos - ThreadLocalRandom.current().nextLong(nanos / 10 + 1);
    }
}
