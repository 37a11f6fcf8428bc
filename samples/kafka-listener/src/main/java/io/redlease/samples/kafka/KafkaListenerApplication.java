package io.redlease.samples.kafka;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * A Kafka consumer that runs on one instance at a time: the leader of the election {@code
 * {orders}}. Its listener container is declared with {@code autoStartup = "false"} and named in
 * {@code redlease.lifecycle.listeners}, so redlease starts it when this instance is elected and
 * stops it, before the lease is released, when the term ends. Every instance's consumer is the same
 * static member of the consumer group ({@code group.instance.id} in {@code application.properties})
 * so the group hands its partitions to the successor without a rebalance.
 */
@SpringBootApplication
public class KafkaListenerApplication {

    // tag::error-handler[]
    /**
     * Retries a failed record until it is applied or the container stops, never skipping it: a
     * write refused by the fence means this instance no longer leads, its container is being
     * stopped, and the record's offset must stay uncommitted for the successor. (Spring Kafka's
     * default gives up after ten attempts and commits past the record.)
     */
    @Bean
    CommonErrorHandler errorHandler() {
        return new DefaultErrorHandler(new FixedBackOff(100, FixedBackOff.UNLIMITED_ATTEMPTS));
    }

    // end::error-handler[]

    public static void main(String[] args) {
        SpringApplication.run(KafkaListenerApplication.class, args);
    }
}
