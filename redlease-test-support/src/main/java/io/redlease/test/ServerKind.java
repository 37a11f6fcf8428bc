package io.redlease.test;

import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/** Where a {@link PostgresServer}, {@link MariaDbServer} or {@link RabbitMqServer} comes from. */
public enum ServerKind {
    /** A process the fixture started from the installed binaries, on free loopback ports. */
    MANAGED,
    /** A Testcontainers container, used where Docker is available and no binary is. */
    CONTAINER,
    /** A server named by an environment variable; the fixture never starts or stops it. */
    EXTERNAL;

    /**
     * Decides where a server comes from: the environment variable if set, else the installed
     * binaries, else Docker; {@code null} when there is none of them.
     *
     * @param externalUrl the value of the server's environment variable, or {@code null}
     * @param binariesFound whether the binaries the fixture starts were found
     * @param dockerAvailable whether a Docker engine answers; asked only when needed
     * @return the kind of server to use, or {@code null} if none can be had
     */
    static @Nullable ServerKind choose(
            @Nullable String externalUrl, boolean binariesFound, BooleanSupplier dockerAvailable) {
        if (externalUrl != null && !externalUrl.isBlank()) {
            return EXTERNAL;
        }
        if (binariesFound) {
            return MANAGED;
        }
        return dockerAvailable.getAsBoolean() ? CONTAINER : null;
    }
}
