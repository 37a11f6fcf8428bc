package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

/**
 * Review probe: a leader-only Kafka listener container is not started by an explicit start of its
 * registry on an instance that does not lead (no broker needed: a started container runs its
 * consumer thread whether or not it reaches one).
 */
@ExtendWith(RedisExtension.class)
class KafkaListenerProbeTests {

    @Test
    void aRegistryStartDoesNotStartTheListenerOnANonLeader(RedisServer server) {
        try (ConfigurableApplicationContext context =
                new SpringApplicationBuilder(KafkaTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=kafka-probe-" + System.nanoTime(),
                                "redlease.auto-startup=false",
                                "redlease.lifecycle.listeners=orders")
                        .run()) {
            KafkaListenerEndpointRegistry registry =
                    context.getBean(KafkaListenerEndpointRegistry.class);
            registry.stop();
            registry.start();
            assertThat(registry.getListenerContainer("orders").isRunning())
                    .as("non-leader's Kafka container after registry.start()")
                    .isFalse();
        }
    }
}
