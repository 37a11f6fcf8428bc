package io.redlease.docs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The core API without Spring Boot (docs/core-api.md): an elector, its task and its fence. */
@ExtendWith(RedisExtension.class)
class CoreApiTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    private static final Logger log = LoggerFactory.getLogger(CoreApiTests.class);

    @Test
    void anElectorLeadsWritesThroughItsFenceAndReleasesOnClose(RedisServer server)
            throws Exception {
        LettuceConnectionFactory connectionFactory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        try {
            // tag::elector[]
            StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
            Elector elector =
                    new Elector(
                            redis,
                            ElectorConfig.builder("{report-builder}")
                                    .ttl(Duration.ofSeconds(5))
                                    .observer(
                                            new Observer() {
                                                @Override
                                                public void onElected(long token) {
                                                    log.info("leading, token {}", token);
                                                }

                                                @Override
                                                public void onError(Operation op, Throwable e) {
                                                    log.warn("{} failed", op, e);
                                                }
                                            })
                                    .build());

            elector.start(
                    term -> { // runs on a thread of its own, once per term won
                        while (term.isActive()) {
                            if (!term.fencer().hset("{report-builder}:job", "status", "running")) {
                                return; // refused: a newer leader exists, this term is over
                            }
                            Thread.sleep(1000); // interrupted when the term ends
                        }
                    });
            // end::elector[]
            await().atMost(FIRST_ELECTION)
                    .until(
                            () ->
                                    redis.<String, String>opsForHash()
                                            .get("{report-builder}:job", "status"),
                            "running"::equals);
            assertThat(elector.isLeader()).isTrue();
            // tag::close[]
            elector.close(); // ends the term, waits for the task, releases the lease
            // end::close[]
            assertThat(elector.isLeader()).isFalse();
            assertThat(redis.hasKey("{report-builder}:leader")).isFalse();
        } finally {
            connectionFactory.destroy();
        }
    }
}
