package io.redlease.benchmarks.support;

import io.redlease.test.RedisServer;
import java.util.HashMap;
import java.util.Map;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The benchmarks' Redis: always a {@code redis-server} process of their own on a free loopback
 * port, never a shared server, so flushing, resetting and counting its statistics disturbs nobody.
 */
public final class BenchRedis {

    /** The loopback address every benchmark process connects to. */
    public static final String HOST = "127.0.0.1";

    private BenchRedis() {}

    /**
     * Starts a private {@code redis-server} (no persistence) through the test fixture.
     *
     * @throws IllegalStateException if {@value RedisServer#URL_ENV} is set (the benchmarks refuse
     *     to run against an external server) or no {@code redis-server} is on the PATH
     */
    public static RedisServer start() {
        String external = System.getenv(RedisServer.URL_ENV);
        if (external != null && !external.isBlank()) {
            throw new IllegalStateException(
                    "The benchmarks start their own redis-server and never use an external one;"
                            + " unset "
                            + RedisServer.URL_ENV);
        }
        RedisServer server = RedisServer.start();
        if (!server.isManaged()) {
            server.close();
            throw new IllegalStateException(
                    "The benchmarks need redis-server on the PATH (no Docker fallback)");
        }
        return server;
    }

    /**
     * Returns a started Lettuce connection factory (one shared native connection) on the port,
     * already connected: a PING has gone through, so no later measurement pays for the connect.
     */
    public static LettuceConnectionFactory lettuce(int port) {
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(new RedisStandaloneConfiguration(HOST, port));
        factory.afterPropertiesSet();
        factory.start();
        try (RedisConnection connection = factory.getConnection()) {
            connection.ping();
        }
        return factory;
    }

    /** Parses the text of an {@code INFO} reply into its {@code field:value} pairs. */
    public static Map<String, String> parseInfo(String info) {
        Map<String, String> fields = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).strip());
            }
        }
        return fields;
    }

    /**
     * Parses {@code INFO commandstats} into calls per command, e.g. {@code evalsha -> 12}; sub
     * commands keep their {@code |} form ({@code client|list}).
     */
    public static Map<String, Long> commandCalls(String info) {
        Map<String, Long> calls = new HashMap<>();
        for (Map.Entry<String, String> field : parseInfo(info).entrySet()) {
            if (!field.getKey().startsWith("cmdstat_")) {
                continue;
            }
            String command = field.getKey().substring("cmdstat_".length());
            for (String part : field.getValue().split(",")) {
                if (part.startsWith("calls=")) {
                    calls.put(command, Long.parseLong(part.substring("calls=".length())));
                }
            }
        }
        return calls;
    }
}
