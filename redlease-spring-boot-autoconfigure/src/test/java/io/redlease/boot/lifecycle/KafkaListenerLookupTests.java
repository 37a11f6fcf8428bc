package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

import io.redlease.core.Elections;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;

/**
 * Kafka listener containers are found by id in the {@code KafkaListenerEndpointRegistry}; the
 * elections do not start here, so no broker is needed.
 */
@ExtendWith(RedisExtension.class)
class KafkaListenerLookupTests {

    private static ConfigurableApplicationContext run(RedisServer server, String listeners) {
        return new SpringApplicationBuilder(KafkaTestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "spring.data.redis.url=" + server.url(),
                        "redlease.name=kafka-lookup-" + System.nanoTime(),
                        "redlease.auto-startup=false",
                        "redlease.lifecycle.listeners=" + listeners)
                .run();
    }

    @Test
    void aKafkaListenerIsFoundByIdAndNotStarted(RedisServer server) {
        try (ConfigurableApplicationContext context = run(server, "orders")) {
            assertThat(context.getBean(LeaderLifecycles.class).members().get(Elections.DEFAULT))
                    .containsExactly(
                            new LeaderLifecycles.Member(
                                    "orders",
                                    AbstractMessageListenerContainer.DEFAULT_PHASE,
                                    false));
        }
    }

    @Test
    void anUnknownIdNamesTheKafkaRegistry(RedisServer server) {
        assertThatException()
                .isThrownBy(() -> run(server, "invoices"))
                .withStackTraceContaining(
                        "no listener container has the id 'invoices' in"
                                + " KafkaListenerEndpointRegistry");
    }
}
