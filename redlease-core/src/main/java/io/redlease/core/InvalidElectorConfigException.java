package io.redlease.core;

/**
 * Thrown when an {@link ElectorConfig} breaks a rule; {@link #setting()} names the setting, so a
 * caller that builds the configuration from its own properties can point at the right one.
 *
 * <p>The message is the Go library's, for the rules it has.
 */
public class InvalidElectorConfigException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final Setting setting;

    InvalidElectorConfigException(Setting setting, String message) {
        super(message);
        this.setting = setting;
    }

    /** Returns the setting that broke a rule. */
    public Setting setting() {
        return setting;
    }

    /** The settings of an {@link ElectorConfig}. */
    public enum Setting {
        /** The election name. */
        NAME,
        /** The lease time to live. */
        TTL,
        /** The renew interval. */
        RENEW_INTERVAL,
        /** The acquire interval. */
        ACQUIRE_INTERVAL,
        /** The replica acknowledgement count or timeout. */
        REPLICA_ACKNOWLEDGEMENT,
        /** The drain timeout of stopping. */
        DRAIN_TIMEOUT,
        /** The extra key prefixes fenced writes may name. */
        FENCED_KEY_PREFIXES,

        /** How long a run waits for its connection to Redis. */
        CONNECT_TIMEOUT
    }
}
