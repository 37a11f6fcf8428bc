package io.redlease.docs.partitions;

import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The partitioned job example of docs/partitions.md, with its properties. */
@ExtendWith(RedisExtension.class)
class SettlementJobTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    @Test
    void aLoneInstanceSettlesEveryPartitionThroughItsFence(RedisServer server) {
        String name = "billing-" + System.nanoTime();
        try (ConfigurableApplicationContext app =
                SpringApplication.run(
                        PartitionsApplication.class,
                        "--spring.config.name=partitions",
                        "--spring.main.web-application-type=none",
                        "--spring.data.redis.url=" + server.url(),
                        "--redlease.name={" + name + "}")) {
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            await().atMost(FIRST_ELECTION)
                    .until(
                            () ->
                                    IntStream.range(0, 8)
                                            .allMatch(
                                                    p ->
                                                            redis.opsForHash()
                                                                    .hasKey(
                                                                            "{"
                                                                                    + name
                                                                                    + ":orders:p"
                                                                                    + p
                                                                                    + "}:state",
                                                                            "settled-at")));
        }
    }
}
