package io.redlease.boot.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The {@value RedleaseMetrics#LEASE_HELD} gauge on followers and leaders. */
@ExtendWith(RedisExtension.class)
class RedleaseMetricsTests {

    private final String name = "redlease-metrics-held:" + System.nanoTime();

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private final RedleaseMetrics metrics = new RedleaseMetrics();

    private LettuceConnectionFactory factory;

    private StringRedisTemplate redis;

    @BeforeEach
    void setUp(RedisServer server) {
        factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        redis = new StringRedisTemplate(factory);
        metrics.bindTo(registry);
    }

    @AfterEach
    void tearDown() {
        factory.destroy();
    }

    private double gauge(String meter) {
        return registry.get(meter).tag(RedleaseMetrics.TAG_NAME, name).gauge().value();
    }

    @Test
    void aFollowerOfAForeignHolderReportsTheLeaseHeldThenItsOwnLease() {
        // A holder that exports no meters, such as a Go instance.
        redis.opsForValue().set(name + ":leader", "go", Duration.ofSeconds(30));
        Elector follower =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(100))
                                .instanceId("java")
                                .observer(metrics.observer(name))
                                .build());
        metrics.lease(follower);
        try {
            assertThat(gauge(RedleaseMetrics.LEASE_HELD)).isZero();
            follower.start();
            await().until(() -> gauge(RedleaseMetrics.LEASE_HELD) == 1.0);
            assertThat(gauge(RedleaseMetrics.LEADER)).isZero();
            // The foreign holder goes away; the follower leads and still reports a held lease.
            redis.delete(name + ":leader");
            await().until(() -> gauge(RedleaseMetrics.LEADER) == 1.0);
            assertThat(gauge(RedleaseMetrics.LEASE_HELD)).isEqualTo(1.0);
        } finally {
            follower.close();
        }
        assertThat(gauge(RedleaseMetrics.LEASE_HELD)).isZero();
    }
}
