package io.redlease.samples.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

/**
 * The sample in this JVM on a real Kafka broker and Redis: elected, it consumes and applies orders.
 */
@ExtendWith(RedisExtension.class)
class KafkaListenerApplicationTests {

    @Test
    void theLeaderConsumesAndAppliesEachOrderThroughTheFence(RedisServer server) throws Exception {
        String name = "{kafka-orders-app-" + System.nanoTime() + "}";
        try (KafkaOrders orders = new KafkaOrders(KafkaBroker.shared())) {
            List<String> arguments =
                    new ArrayList<>(
                            List.of(
                                    "--spring.main.web-application-type=none",
                                    "--spring.data.redis.url=" + server.url(),
                                    "--redlease.name=" + name));
            arguments.addAll(orders.arguments());
            try (ConfigurableApplicationContext context =
                    SpringApplication.run(
                            KafkaListenerApplication.class, arguments.toArray(String[]::new))) {
                KafkaListenerEndpointRegistry registry =
                        context.getBean(KafkaListenerEndpointRegistry.class);
                await().until(() -> registry.getListenerContainer("orders").isRunning());
                orders.send("o1");
                orders.send("o2");
                StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
                await().until(() -> redis.opsForList().size(name + ":applied") == 2);
                assertThat(redis.opsForList().range(name + ":applied", 0, -1))
                        .containsExactly("o1", "o2");
            }
        }
    }
}
