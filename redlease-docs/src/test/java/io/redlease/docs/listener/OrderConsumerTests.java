package io.redlease.docs.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.core.Elections;
import io.redlease.core.FenceRefusedException;
import io.redlease.core.Term;
import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The leader-only listener example of docs/listeners-and-lifecycles.md, on a real RabbitMQ. */
@ExtendWith(RedisExtension.class)
class OrderConsumerTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    @Test
    void theLeaderConsumesAndAppliesEachOrderOnce(RedisServer server) {
        String name = "{orders-" + System.nanoTime() + "}";
        String virtualHost = rabbit.newVirtualHost();
        try (ConfigurableApplicationContext app = start(server, name, virtualHost)) {
            RabbitListenerEndpointRegistry registry =
                    app.getBean(RabbitListenerEndpointRegistry.class);
            await().atMost(FIRST_ELECTION)
                    .until(() -> registry.getListenerContainer("orders").isRunning());
            RabbitTemplate template = app.getBean(RabbitTemplate.class);
            template.convertAndSend("orders", "o1");
            template.convertAndSend("orders", "o2");
            template.convertAndSend("orders", "o1"); // delivered again: applied once
            template.convertAndSend("orders", "o3");
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            await().until(() -> redis.opsForHash().size(name + ":orders") == 3);
            assertThat(redis.opsForList().range(name + ":applied", 0, -1))
                    .containsExactly("o1", "o2", "o3");
        } finally {
            rabbit.deleteVirtualHost(virtualHost);
        }
    }

    @Test
    void aRefusedWriteThrowsSoTheMessageIsRequeued(RedisServer server) throws Exception {
        String name = "{orders-refused-" + System.nanoTime() + "}";
        String virtualHost = rabbit.newVirtualHost();
        // A long TTL keeps the renewal that would end the superseded term out of the test's way.
        try (ConfigurableApplicationContext app =
                start(server, name, virtualHost, "--redlease.ttl=60s")) {
            RedleaseTester tester =
                    RedleaseTester.of(
                            app.getBean(Elections.class),
                            app.getBean(RedisConnectionFactory.class));
            Term term = tester.awaitLeadership();
            OrderConsumer consumer = app.getBean(OrderConsumer.class);
            // The message arrives in a term that another instance has just superseded.
            assertThatExceptionOfType(FenceRefusedException.class)
                    .isThrownBy(
                            () ->
                                    term.execute(
                                            () -> {
                                                tester.startNewerTerm();
                                                consumer.consume("o1");
                                                return null;
                                            },
                                            false))
                    .satisfies(refused -> assertThat(refused.token()).isEqualTo(term.token()))
                    .withMessageContaining("was refused");
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            assertThat(redis.hasKey(name + ":orders")).isFalse();
        } finally {
            rabbit.deleteVirtualHost(virtualHost);
        }
    }

    private static ConfigurableApplicationContext start(
            RedisServer server, String name, String virtualHost, String... more) {
        List<String> args = new ArrayList<>(List.of(more));
        args.addAll(
                List.of(
                        "--spring.config.name=listener",
                        "--spring.main.web-application-type=none",
                        "--spring.data.redis.url=" + server.url(),
                        "--spring.rabbitmq.host=" + rabbit.host(),
                        "--spring.rabbitmq.port=" + rabbit.port(),
                        "--spring.rabbitmq.username=" + rabbit.username(),
                        "--spring.rabbitmq.password=" + rabbit.password(),
                        "--spring.rabbitmq.virtual-host=" + virtualHost,
                        "--redlease.name=" + name));
        return SpringApplication.run(OrdersApplication.class, args.toArray(String[]::new));
    }
}
