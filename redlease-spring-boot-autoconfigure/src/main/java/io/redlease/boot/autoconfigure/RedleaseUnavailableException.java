package io.redlease.boot.autoconfigure;

/**
 * Redlease is enabled, but its auto-configuration cannot apply (no {@code RedisConnectionFactory},
 * or several and none primary); reported at startup by a failure analyzer with the reason and the
 * fix, before any bean misses the {@code LeadershipContext} or {@code Elections} it injects.
 */
class RedleaseUnavailableException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String reason;

    private final String fix;

    RedleaseUnavailableException(String reason, String fix) {
        super("redlease is enabled, but its auto-configuration did not apply: " + reason);
        this.reason = reason;
        this.fix = fix;
    }

    /** Returns why the auto-configuration did not apply. */
    String reason() {
        return reason;
    }

    /** Returns what to do about it. */
    String fix() {
        return fix;
    }
}
