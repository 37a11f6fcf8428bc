package io.redlease.core;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Builds Spring Data Redis templates for test servers; closing releases their clients. Every
 * template speaks the protocol {@value #RESP_PROPERTY} asks for (see {@link #requestedProtocol}).
 */
final class Templates implements AutoCloseable {

    /**
     * The system property that picks the protocol of every template; see {@link
     * #requestedProtocol}.
     */
    static final String RESP_PROPERTY = "redlease.test.resp";

    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    /** Reconnects every 50 ms, so a restarted server is used again at once. */
    private final ClientResources resources =
            DefaultClientResources.builder()
                    .reconnectDelay(Delay.constant(Duration.ofMillis(50)))
                    .build();

    /** Returns a template on the given server with a generous client timeout. */
    StringRedisTemplate on(RedisServer server) {
        return on(server.host(), server.port(), server.password(), Duration.ofSeconds(10));
    }

    /**
     * Returns a template on host:port whose client waits an hour for a reply, so only the elector's
     * own bounds can end a hung call.
     */
    StringRedisTemplate withoutClientTimeouts(String host, int port) {
        return on(host, port, null, Duration.ofHours(1));
    }

    /**
     * Returns a template on the given server whose client does not reconnect a dropped connection
     * on its own ({@code autoReconnect=false}).
     */
    StringRedisTemplate withoutAutoReconnect(RedisServer server) {
        return on(
                server.host(),
                server.port(),
                server.password(),
                Duration.ofSeconds(10),
                options().autoReconnect(false));
    }

    /** Returns a template on the given server speaking the given protocol, whatever is asked. */
    StringRedisTemplate speaking(RedisServer server, ProtocolVersion protocol) {
        return on(
                server.host(),
                server.port(),
                server.password(),
                Duration.ofSeconds(10),
                options().protocolVersion(protocol));
    }

    StringRedisTemplate on(String host, int port, String password, Duration commandTimeout) {
        return on(host, port, password, commandTimeout, options());
    }

    /**
     * Returns the protocol {@value #RESP_PROPERTY} asks for: {@code 2} forces RESP2 (the
     * compatibility matrix's {@code resp2} leg), {@code 3} RESP3; unset or empty leaves Lettuce's
     * default (RESP3 when the server offers it, else RESP2).
     *
     * @throws IllegalArgumentException for any other value, naming the property
     */
    static @Nullable ProtocolVersion requestedProtocol() {
        String value = System.getProperty(RESP_PROPERTY, "").strip();
        return switch (value) {
            case "" -> null;
            case "2" -> ProtocolVersion.RESP2;
            case "3" -> ProtocolVersion.RESP3;
            default ->
                    throw new IllegalArgumentException(
                            "-D" + RESP_PROPERTY + " must be 2, 3 or empty; got '" + value + "'");
        };
    }

    /** Spring Data Redis' default client options, with the protocol the run asks for. */
    private static ClientOptions.Builder options() {
        ClientOptions.Builder options =
                ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled());
        ProtocolVersion protocol = requestedProtocol();
        if (protocol != null) {
            options.protocolVersion(protocol);
        }
        return options;
    }

    private StringRedisTemplate on(
            String host,
            int port,
            String password,
            Duration commandTimeout,
            ClientOptions.Builder options) {
        RedisStandaloneConfiguration standalone = new RedisStandaloneConfiguration(host, port);
        if (password != null) {
            standalone.setPassword(password);
        }
        LettuceClientConfiguration client =
                LettuceClientConfiguration.builder()
                        .clientResources(resources)
                        .commandTimeout(commandTimeout)
                        .clientOptions(options.build())
                        .build();
        LettuceConnectionFactory factory = new LettuceConnectionFactory(standalone, client);
        factory.setEagerInitialization(false);
        factory.afterPropertiesSet();
        factory.start();
        factories.add(factory);
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        return template;
    }

    @Override
    public void close() {
        List<LettuceConnectionFactory> closing = new ArrayList<>(factories);
        factories.clear();
        // A factory still connecting to a server that never answers holds its lock until the
        // connection attempt ends; do not let that hang the test run.
        Thread closer =
                new Thread(
                        () -> {
                            closing.forEach(LettuceConnectionFactory::destroy);
                            resources.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
                        },
                        "templates-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(10_000);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
