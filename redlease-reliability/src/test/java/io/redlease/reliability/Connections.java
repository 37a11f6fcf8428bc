package io.redlease.reliability;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.redlease.test.RedisSentinelSetup;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Builds Spring Data Redis templates over Lettuce for every topology, and over Jedis for a
 * standalone server; closing frees them all.
 */
final class Connections implements AutoCloseable {

    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);

    private final List<org.springframework.beans.factory.DisposableBean> factories =
            new ArrayList<>();

    /** Reconnects every 50 ms, so a restarted or failed-over server is used again at once. */
    private final ClientResources resources =
            DefaultClientResources.builder()
                    .reconnectDelay(Delay.constant(Duration.ofMillis(50)))
                    .build();

    StringRedisTemplate standalone(String host, int port) {
        return standalone(host, port, null, null);
    }

    StringRedisTemplate standalone(
            String host, int port, @Nullable String username, @Nullable String password) {
        RedisStandaloneConfiguration config = new RedisStandaloneConfiguration(host, port);
        if (username != null) {
            config.setUsername(username);
        }
        if (password != null) {
            config.setPassword(password);
        }
        return template(config, client().build());
    }

    /** A template over TLS that trusts the given CA certificate (PEM). */
    StringRedisTemplate tls(String host, int port, File caCert) {
        RedisStandaloneConfiguration config = new RedisStandaloneConfiguration(host, port);
        SslOptions ssl = SslOptions.builder().jdkSslProvider().trustManager(caCert).build();
        LettuceClientConfiguration client =
                client().useSsl()
                        .and()
                        .clientOptions(ClientOptions.builder().sslOptions(ssl).build())
                        .build();
        return template(config, client);
    }

    /** A template that finds the primary through the Sentinels. */
    StringRedisTemplate sentinel(RedisSentinelSetup setup) {
        RedisSentinelConfiguration config =
                new RedisSentinelConfiguration().master(RedisSentinelSetup.MASTER_NAME);
        for (io.redlease.test.RedisNode sentinel : setup.sentinels()) {
            config.sentinel(sentinel.host(), sentinel.port());
        }
        return template(config, client().build());
    }

    /** A cluster-aware template that refreshes its topology on redirects and every second. */
    StringRedisTemplate cluster(List<io.redlease.test.RedisNode> nodes) {
        RedisClusterConfiguration config = new RedisClusterConfiguration();
        for (io.redlease.test.RedisNode node : nodes) {
            config.addClusterNode(new RedisNode(node.host(), node.port()));
        }
        ClusterTopologyRefreshOptions refresh =
                ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(Duration.ofSeconds(1))
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofMillis(100))
                        .build();
        LettuceClientConfiguration client =
                client().clientOptions(
                                ClusterClientOptions.builder()
                                        .topologyRefreshOptions(refresh)
                                        .build())
                        .build();
        return template(config, client);
    }

    /**
     * A template over Jedis (blocking calls, a pool of connections) with the same command timeout
     * as the Lettuce templates.
     */
    StringRedisTemplate jedis(String host, int port) {
        org.apache.commons.pool2.impl.GenericObjectPoolConfig<redis.clients.jedis.Jedis> pool =
                new org.apache.commons.pool2.impl.GenericObjectPoolConfig<>();
        pool.setMaxTotal(16);
        pool.setMaxWait(COMMAND_TIMEOUT);
        org.springframework.data.redis.connection.jedis.JedisClientConfiguration client =
                org.springframework.data.redis.connection.jedis.JedisClientConfiguration.builder()
                        .connectTimeout(COMMAND_TIMEOUT)
                        .readTimeout(COMMAND_TIMEOUT)
                        .usePooling()
                        .poolConfig(pool)
                        .build();
        org.springframework.data.redis.connection.jedis.JedisConnectionFactory factory =
                new org.springframework.data.redis.connection.jedis.JedisConnectionFactory(
                        new RedisStandaloneConfiguration(host, port), client);
        factory.afterPropertiesSet();
        factory.start();
        synchronized (factories) {
            factories.add(factory);
        }
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        return template;
    }

    private LettuceClientConfiguration.LettuceClientConfigurationBuilder client() {
        return LettuceClientConfiguration.builder()
                .clientResources(resources)
                .commandTimeout(COMMAND_TIMEOUT);
    }

    private StringRedisTemplate template(
            RedisConfiguration config, LettuceClientConfiguration client) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(config, client);
        factory.setEagerInitialization(false);
        factory.afterPropertiesSet();
        factory.start();
        synchronized (factories) {
            factories.add(factory);
        }
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        return template;
    }

    @Override
    public void close() {
        synchronized (factories) {
            for (org.springframework.beans.factory.DisposableBean factory : factories) {
                try {
                    factory.destroy();
                } catch (Exception ignored) {
                    // closing anyway
                }
            }
            factories.clear();
        }
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}
