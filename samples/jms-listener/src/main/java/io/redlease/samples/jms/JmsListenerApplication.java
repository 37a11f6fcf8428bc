package io.redlease.samples.jms;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A JMS consumer on ActiveMQ Artemis that runs on one instance at a time: the leader of the
 * election {@code {orders}}. Its listener container is declared with {@code autoStartup = "false"}
 * and named in {@code redlease.lifecycle.listeners}, so redlease starts it when this instance is
 * elected and stops it, before the lease is released, when the term ends. The container's session
 * is transacted, so a message whose listener throws is rolled back and redelivered.
 */
@SpringBootApplication
public class JmsListenerApplication {

    public static void main(String[] args) {
        SpringApplication.run(JmsListenerApplication.class, args);
    }
}
