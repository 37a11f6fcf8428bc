package io.redlease.boot.test;

import static io.redlease.boot.test.RedleaseAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.RedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** The assertions' verdicts and messages, on an elector that is not running. */
class ElectorAssertTests {

    private LettuceConnectionFactory factory;

    private Elector elector;

    @BeforeEach
    void setUp() {
        factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(
                                RedisServers.shared().host(), RedisServers.shared().port()));
        factory.afterPropertiesSet();
        factory.start();
        elector =
                new Elector(
                        factory,
                        ElectorConfig.builder("{kit-assert-" + System.nanoTime() + "}")
                                .instanceId("me")
                                .build());
    }

    @AfterEach
    void tearDown() {
        elector.close();
        factory.destroy();
    }

    @Test
    void aStoppedElectorIsNeitherLeaderNorFollower() {
        assertThat(elector).isStopped().doesNotHoldTheLease();
        assertThatExceptionOfType(AssertionError.class)
                .isThrownBy(() -> assertThat(elector).isLeader())
                .withMessageContaining("Expected instance <me> to lead");
        assertThatExceptionOfType(AssertionError.class)
                .isThrownBy(() -> assertThat(elector).isFollower())
                .withMessageContaining("but it is stopped");
        assertThatExceptionOfType(AssertionError.class)
                .isThrownBy(() -> assertThat(elector).hasToken(1))
                .withMessageContaining("to lead with token <1>");
        assertThatExceptionOfType(AssertionError.class)
                .isThrownBy(() -> assertThat(elector).holdsTheLease())
                .withMessageContaining("but it holds nothing");
    }
}
