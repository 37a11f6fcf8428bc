package io.redlease.samples.listener;

import org.springframework.amqp.core.Queue;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A RabbitMQ consumer that runs on one instance at a time: the leader of the election {@code
 * {orders}}. Its listener container is declared with {@code autoStartup = "false"} and named in
 * {@code redlease.lifecycle.listeners}, so redlease starts it when this instance is elected and
 * stops it, before the lease is released, when the term ends.
 */
@SpringBootApplication
public class ListenerApplication {

    /** The queue the orders arrive on. */
    public static final String QUEUE = "orders";

    @Bean
    Queue orders() {
        return new Queue(QUEUE);
    }

    public static void main(String[] args) {
        SpringApplication.run(ListenerApplication.class, args);
    }
}
