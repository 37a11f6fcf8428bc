package io.redlease.core;

import io.redlease.core.InvalidElectorConfigException.Setting;
import java.time.Duration;

/**
 * The rules {@link ElectorConfig.Builder#build()} applies to the lease timings and the replica
 * acknowledgement, in the Go library's order and with its messages, and the defaults it fills in.
 */
final class ConfigRules {

    static final Duration MIN_TTL = Duration.ofMillis(100);

    static final Duration MIN_INTERVAL = Duration.ofMillis(1);

    private ConfigRules() {}

    /**
     * The lease timings after defaults and truncation: time to live, renew and acquire interval.
     */
    record Timings(Duration ttl, Duration renew, Duration acquire) {}

    /**
     * Checks the settings and resolves the timings.
     *
     * @throws InvalidElectorConfigException naming the first rule broken
     */
    static Timings check(
            String name,
            Duration ttlSetting,
            Duration renewInterval,
            Duration acquireInterval,
            int ackReplicas,
            Duration ackTimeout) {
        if (name.isEmpty()) {
            throw invalid(Setting.NAME, "redlease: empty Name");
        }
        if (ttlSetting.isNegative() || renewInterval.isNegative() || acquireInterval.isNegative()) {
            Setting negative =
                    ttlSetting.isNegative()
                            ? Setting.TTL
                            : renewInterval.isNegative()
                                    ? Setting.RENEW_INTERVAL
                                    : Setting.ACQUIRE_INTERVAL;
            throw invalid(negative, "redlease: negative durations are not valid");
        }
        Duration ttl =
                Duration.ofMillis(
                        (ttlSetting.isZero() ? ElectorConfig.DEFAULT_TTL : ttlSetting).toMillis());
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw invalid(Setting.TTL, "redlease: TTL must be at least 100ms");
        }
        Duration renew = renewInterval.isZero() ? ttl.dividedBy(3) : renewInterval;
        Duration acquire = acquireInterval.isZero() ? ttl.dividedBy(2) : acquireInterval;
        if (renew.compareTo(ttl.dividedBy(2)) > 0) {
            throw invalid(Setting.RENEW_INTERVAL, "redlease: RenewInterval must be at most TTL/2");
        }
        if (acquire.compareTo(ttl) >= 0) {
            throw invalid(
                    Setting.ACQUIRE_INTERVAL, "redlease: AcquireInterval must be less than TTL");
        }
        if (renew.compareTo(MIN_INTERVAL) < 0) {
            throw invalid(Setting.RENEW_INTERVAL, "redlease: RenewInterval must be at least 1ms");
        }
        if (acquire.compareTo(MIN_INTERVAL) < 0) {
            throw invalid(
                    Setting.ACQUIRE_INTERVAL, "redlease: AcquireInterval must be at least 1ms");
        }
        if (ackReplicas > 0) {
            Duration acquireTimeout = acquireTimeout(ttl, renew, acquire);
            if (ackTimeout.isNegative()
                    || ackTimeout.isZero()
                    || ackTimeout.compareTo(acquireTimeout) >= 0) {
                throw invalid(
                        Setting.REPLICA_ACKNOWLEDGEMENT,
                        "redlease: replica acknowledgement timeout must be positive and less"
                                + " than the acquire timeout, min(AcquireInterval, TTL -"
                                + " RenewInterval) = "
                                + acquireTimeout.toMillis()
                                + "ms");
            }
        }
        return new Timings(ttl, renew, acquire);
    }

    /**
     * Returns how long an acquire attempt may take: min(acquire interval, ttl - renew interval).
     */
    static Duration acquireTimeout(Duration ttl, Duration renew, Duration acquire) {
        Duration rest = ttl.minus(renew);
        return acquire.compareTo(rest) < 0 ? acquire : rest;
    }

    static InvalidElectorConfigException invalid(Setting setting, String message) {
        return new InvalidElectorConfigException(setting, message);
    }
}
