package io.redlease.docs.listener;

import org.springframework.amqp.core.Queue;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/** The leader-only listener example of docs/listeners-and-lifecycles.md. */
@SpringBootApplication
class OrdersApplication {

    @Bean
    Queue orders() {
        return new Queue("orders");
    }
}
