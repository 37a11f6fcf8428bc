package io.redlease.boot.lifecycle;

import java.util.Map;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;

/** An application with a Kafka listener "orders"; its container is never started by these tests. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableKafka
class KafkaTestApplication {

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
    Orders orders() {
        return new Orders();
    }

    /** A Kafka consumer of the leader. */
    static class Orders {

        @KafkaListener(id = "orders", topics = "orders", autoStartup = "false")
        void consume(String order) {}
    }
}
