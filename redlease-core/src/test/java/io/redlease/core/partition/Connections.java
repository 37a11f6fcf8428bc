package io.redlease.core.partition;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Connection factories of their own per simulated instance, so instances in one JVM share no
 * connection; closing destroys them all.
 */
final class Connections implements AutoCloseable {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    /** Returns a unique name for a test: no braces, so it can name a partitioned election. */
    static String unique(TestInfo info) {
        String method = info.getTestMethod().map(m -> m.getName()).orElse("test");
        return "redlease-test:"
                + method
                + ":"
                + System.nanoTime()
                + "-"
                + SEQUENCE.incrementAndGet();
    }

    StringRedisTemplate to(RedisServer server) {
        return to(server.host(), server.port(), server.password(), Duration.ofSeconds(10));
    }

    StringRedisTemplate to(String host, int port, String password, Duration commandTimeout) {
        RedisStandaloneConfiguration standalone = new RedisStandaloneConfiguration(host, port);
        if (password != null) {
            standalone.setPassword(password);
        }
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(
                        standalone,
                        LettuceClientConfiguration.builder()
                                .commandTimeout(commandTimeout)
                                .build());
        return started(factory);
    }

    /** Returns a template on the primary that a Sentinel deployment names. */
    StringRedisTemplate sentinel(io.redlease.test.RedisSentinelSetup setup) {
        RedisSentinelConfiguration config =
                new RedisSentinelConfiguration()
                        .master(io.redlease.test.RedisSentinelSetup.MASTER_NAME);
        for (io.redlease.test.RedisNode sentinel : setup.sentinels()) {
            config.sentinel(sentinel.host(), sentinel.port());
        }
        return started(
                new LettuceConnectionFactory(
                        config,
                        LettuceClientConfiguration.builder()
                                .commandTimeout(Duration.ofSeconds(2))
                                .build()));
    }

    private StringRedisTemplate started(LettuceConnectionFactory factory) {
        factory.afterPropertiesSet();
        factory.start();
        synchronized (factories) {
            factories.add(factory);
        }
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        return template;
    }

    /** Returns a template on a Redis Cluster, refreshing its topology every second. */
    StringRedisTemplate cluster(List<io.redlease.test.RedisNode> nodes) {
        RedisClusterConfiguration config = new RedisClusterConfiguration();
        for (io.redlease.test.RedisNode node : nodes) {
            config.addClusterNode(new RedisNode(node.host(), node.port()));
        }
        ClusterTopologyRefreshOptions refresh =
                ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(Duration.ofSeconds(1))
                        .enableAllAdaptiveRefreshTriggers()
                        .build();
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(
                        config,
                        LettuceClientConfiguration.builder()
                                .commandTimeout(Duration.ofSeconds(10))
                                .clientOptions(
                                        ClusterClientOptions.builder()
                                                .topologyRefreshOptions(refresh)
                                                .build())
                                .build());
        return started(factory);
    }

    @Override
    public void close() {
        List<LettuceConnectionFactory> closing;
        synchronized (factories) {
            closing = new ArrayList<>(factories);
            factories.clear();
        }
        // A factory stuck on a server that does not answer must not hang the test run.
        Thread closer =
                new Thread(() -> closing.forEach(LettuceConnectionFactory::destroy), "close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
