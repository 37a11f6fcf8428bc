package io.redlease.test;

import org.jspecify.annotations.Nullable;

/** Access to one Redis server shared by the whole JVM, for code that cannot take parameters. */
public final class RedisServers {

    private static @Nullable RedisServer shared;

    private RedisServers() {}

    /**
     * Returns the JVM-wide server, starting it on first use as {@link RedisServer#start()} does.
     *
     * <p>For example, a Spring test can hand {@code RedisServers.shared().url()} to a
     * {@code @DynamicPropertySource}. Tests sharing it must use unique key names and must not use
     * its levers or close it; it is ended by the JVM shutdown hook. If it was closed anyway, the
     * next call starts a new one.
     *
     * @return the running shared server
     * @throws IllegalStateException if no Redis can be had, with a message saying what to install
     */
    public static synchronized RedisServer shared() {
        RedisServer server = shared;
        if (server == null || server.isClosed()) {
            server = RedisServer.start();
            shared = server;
        }
        return server;
    }
}
