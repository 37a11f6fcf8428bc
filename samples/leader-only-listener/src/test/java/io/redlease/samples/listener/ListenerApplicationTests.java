package io.redlease.samples.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The sample in this JVM on a real RabbitMQ and Redis: elected, it consumes and applies orders. */
@ExtendWith(RedisExtension.class)
class ListenerApplicationTests {

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    @Test
    void theLeaderConsumesAndAppliesEachOrderThroughTheFence(RedisServer server) {
        String name = "{orders-app-" + System.nanoTime() + "}";
        String virtualHost = rabbit.newVirtualHost();
        try (ConfigurableApplicationContext context =
                SpringApplication.run(
                        ListenerApplication.class,
                        "--spring.main.web-application-type=none",
                        "--spring.data.redis.url=" + server.url(),
                        "--spring.rabbitmq.host=" + rabbit.host(),
                        "--spring.rabbitmq.port=" + rabbit.port(),
                        "--spring.rabbitmq.username=" + rabbit.username(),
                        "--spring.rabbitmq.password=" + rabbit.password(),
                        "--spring.rabbitmq.virtual-host=" + virtualHost,
                        "--redlease.name=" + name)) {
            RabbitListenerEndpointRegistry registry =
                    context.getBean(RabbitListenerEndpointRegistry.class);
            await().until(() -> registry.getListenerContainer("orders").isRunning());
            RabbitTemplate template = context.getBean(RabbitTemplate.class);
            template.convertAndSend(ListenerApplication.QUEUE, "o1");
            template.convertAndSend(ListenerApplication.QUEUE, "o2");
            StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
            await().until(() -> redis.opsForList().size(name + ":applied") == 2);
            assertThat(redis.opsForList().range(name + ":applied", 0, -1))
                    .containsExactly("o1", "o2");
        } finally {
            rabbit.deleteVirtualHost(virtualHost);
        }
    }
}
