package io.redlease.boot.lifecycle;

import java.util.Map;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ContainerGroupSequencer;

/**
 * A Kafka listener "orders", in the container group {@code test.group} when set, and, with {@code
 * test.sequencer=true}, a {@link ContainerGroupSequencer} of the group "ordered"; no broker.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableKafka
class KafkaContainerPathsApplication {

    @Bean
    ConcurrentKafkaListenerContainerFactory<String, String> kafkaListenerContainerFactory() {
        ConcurrentKafkaListenerContainerFactory<String, String> factory =
                new ConcurrentKafkaListenerContainerFactory<>();
        factory.setConsumerFactory(
                new DefaultKafkaConsumerFactory<>(
                        Map.of("bootstrap.servers", "127.0.0.1:9", "group.id", "orders"),
                        new StringDeserializer(),
                        new StringDeserializer()));
        return factory;
    }

    @Bean
    @ConditionalOnProperty(name = "test.sequencer", havingValue = "true")
    ContainerGroupSequencer sequencer(KafkaListenerEndpointRegistry registry) {
        return new ContainerGroupSequencer(registry, 5000, "ordered");
    }

    /** Starts the "orders" container with the context, ahead of redlease's registrar. */
    @Bean
    @ConditionalOnProperty(name = "test.early-start", havingValue = "true")
    org.springframework.context.SmartLifecycle earlyStart(KafkaListenerEndpointRegistry registry) {
        return new org.springframework.context.SmartLifecycle() {

            private volatile boolean running;

            @Override
            public void start() {
                running = true;
                java.util.Objects.requireNonNull(registry.getListenerContainer("orders")).start();
            }

            @Override
            public void stop() {
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }

            @Override
            public int getPhase() {
                return Integer.MIN_VALUE;
            }
        };
    }

    @Bean
    Orders orders() {
        return new Orders();
    }

    /** A Kafka consumer of the leader. */
    static class Orders {

        @KafkaListener(
                id = "orders",
                topics = "orders",
                autoStartup = "${test.auto-startup:false}",
                containerGroup = "${test.group:}")
        void consume(String order) {}
    }
}
