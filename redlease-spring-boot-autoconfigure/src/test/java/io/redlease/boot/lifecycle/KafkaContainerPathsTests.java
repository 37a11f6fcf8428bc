package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

/**
 * A leader-only Kafka container on an instance that is not elected (the elections do not start):
 * explicit starts of the registry or the context leave it stopped, and a container-group sequencer
 * that would start it on every instance is refused. No broker is needed.
 */
@ExtendWith(RedisExtension.class)
class KafkaContainerPathsTests {

    private static ConfigurableApplicationContext run(RedisServer server, String... extra) {
        return new SpringApplicationBuilder(KafkaContainerPathsApplication.class)
                .web(WebApplicationType.NONE)
                .properties(
                        "spring.data.redis.url=" + server.url(),
                        "redlease.name=kafka-paths-" + System.nanoTime(),
                        "redlease.auto-startup=false",
                        "redlease.lifecycle.listeners=orders")
                .properties(extra)
                .run();
    }

    private static boolean running(ConfigurableApplicationContext context) {
        return context.getBean(KafkaListenerEndpointRegistry.class)
                .getListenerContainer("orders")
                .isRunning();
    }

    @Test
    void explicitStartsOfTheRegistryAndTheContextLeaveAFollowersContainerStopped(
            RedisServer server) {
        try (ConfigurableApplicationContext context = run(server)) {
            context.getBean(KafkaListenerEndpointRegistry.class).start();
            assertThat(running(context)).isFalse();
            context.start();
            assertThat(running(context)).isFalse();
        }
    }

    /**
     * A container group is a Lifecycle bean: an explicit context.start() starts it, and with it the
     * leader-only container, on a follower.
     */
    @Test
    void aContainerInAContainerGroupIsRefused(RedisServer server) {
        assertThatException()
                .isThrownBy(() -> run(server, "test.group=ordered").close())
                .withStackTraceContaining(
                        "the Kafka listener container 'orders' is in the container group"
                                + " 'ordered'")
                .withStackTraceContaining("Remove containerGroup");
    }

    @Test
    void aContainerGroupSequencersGroupIsRefused(RedisServer server) {
        assertThatException()
                .isThrownBy(() -> run(server, "test.group=ordered", "test.sequencer=true").close())
                .withStackTraceContaining(
                        "the Kafka listener container 'orders' is in the container group"
                                + " 'ordered'");
    }

    /** A container that something started before the registrar would run on every instance. */
    @Test
    void aContainerStartedBeforeTheRegistrarIsRefused(RedisServer server) {
        assertThatException()
                .isThrownBy(() -> run(server, "test.early-start=true").close())
                .withStackTraceContaining(
                        "the listener container 'orders' is running before this instance was"
                                + " elected");
    }

    /** autoStartup = "true" on the annotation is refused, not overridden. */
    @Test
    void anAnnotationsAutoStartupIsRefused(RedisServer server) {
        assertThatException()
                .isThrownBy(() -> run(server, "test.auto-startup=true").close())
                .withStackTraceContaining(
                        "the listener container 'orders' starts with the application");
    }
}
