package io.redlease.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** The endpoint's operations, against a real Redis. */
@ExtendWith(RedisExtension.class)
class RedleaseEndpointTests {

    private LettuceConnectionFactory factory;

    private Elector elector;

    private RedleaseEndpoint endpoint;

    @BeforeEach
    void setUp(RedisServer server) {
        factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        factory.start();
        elector =
                new Elector(
                        factory,
                        ElectorConfig.builder("redlease-endpoint-test:" + System.nanoTime())
                                .build());
        endpoint = new RedleaseEndpoint(Elections.of(Map.of("reports", elector)));
    }

    @AfterEach
    void tearDown() {
        elector.close();
        factory.destroy();
    }

    @Test
    void aKnownElectionIsDescribed() {
        elector.start();
        await().until(elector::isLeader);
        RedleaseEndpoint.ElectionDescriptor described = endpoint.election("reports");
        assertThat(described).isNotNull();
        assertThat(described.role()).isEqualTo("leader");
        assertThat(described.holder()).isEqualTo(elector.instanceId());
        assertThat(endpoint.elections()).containsOnlyKeys("reports");
    }

    @Test
    void anUnknownElectionIsNotFound() {
        // A read operation that returns null answers 404 over HTTP.
        assertThat(endpoint.election("nope")).isNull();
    }

    @Test
    void resigningAnUnknownElectionIsABadRequest() {
        assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.resign("nope"))
                .withMessageContaining("redlease: no election 'nope'")
                .withMessageContaining("[reports]");
    }
}
