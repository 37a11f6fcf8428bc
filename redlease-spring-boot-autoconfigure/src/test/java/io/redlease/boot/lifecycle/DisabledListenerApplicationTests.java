package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * With {@code redlease.enabled=false}, a leader-only RabbitMQ listener consumes on every instance,
 * as {@code @LeaderOnly} methods run then, instead of on none.
 */
@ExtendWith(RedisExtension.class)
class DisabledListenerApplicationTests {

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    private String virtualHost;

    @BeforeEach
    void setUp() {
        this.virtualHost = rabbit.newVirtualHost();
        RabbitTestApplication.consumed.clear();
    }

    @AfterEach
    void tearDown() {
        rabbit.deleteVirtualHost(virtualHost);
    }

    private SpringApplicationBuilder parent(RedisServer server) {
        return new SpringApplicationBuilder(RabbitTestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "spring.data.redis.url=" + server.url(),
                        "redlease.enabled=false",
                        "redlease.name={disabled-listener}",
                        "redlease.instance-id=a",
                        "redlease.lifecycle.listeners=orders",
                        "test.rabbit.host=" + rabbit.host(),
                        "test.rabbit.port=" + rabbit.port(),
                        "test.rabbit.virtual-host=" + virtualHost);
    }

    @Test
    void theLeaderOnlyListenerConsumesOnEveryInstanceWithTheSwitchOff(RedisServer server) {
        try (ConfigurableApplicationContext context = parent(server).run()) {
            assertThat(
                            context.getBean(RabbitListenerEndpointRegistry.class)
                                    .getListenerContainer("orders")
                                    .isRunning())
                    .isTrue();
            context.getBean(RabbitTemplate.class).convertAndSend("orders", "o1");
            await().atMost(Duration.ofMinutes(1))
                    .until(() -> RabbitTestApplication.consumed.contains("a:o1"));
        }
    }

    /** A child context with auto-configuration and nothing of its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Child {}

    @Test
    void aChildContextLeavesTheListenerContainersToItsParent(RedisServer server) {
        SpringApplicationBuilder parent = parent(server);
        try (ConfigurableApplicationContext child =
                parent.child(Child.class).web(WebApplicationType.NONE).run()) {
            assertThat(
                            child.getParent()
                                    .getBean(RabbitListenerEndpointRegistry.class)
                                    .getListenerContainer("orders")
                                    .isRunning())
                    .isTrue();
        } finally {
            parent.context().close();
        }
    }
}
