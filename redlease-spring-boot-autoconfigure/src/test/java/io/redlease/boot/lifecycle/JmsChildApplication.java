package io.redlease.boot.lifecycle;

import jakarta.jms.ConnectionFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jms.annotation.EnableJms;
import org.springframework.jms.config.SimpleJmsListenerContainerFactory;

/**
 * A child context's configuration, with auto-configuration of its own: a transacted simple
 * factory's "orders" listener, in the parent's ({@link JmsContainerPathsApplication}) election.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableJms
class JmsChildApplication {

    @Bean
    SimpleJmsListenerContainerFactory jmsListenerContainerFactory(
            ConnectionFactory connectionFactory) {
        SimpleJmsListenerContainerFactory factory = new SimpleJmsListenerContainerFactory();
        factory.setConnectionFactory(connectionFactory);
        factory.setSessionTransacted(true);
        factory.setAutoStartup(false);
        return factory;
    }

    @Bean
    JmsContainerPathsApplication.Orders ordersListener(
            @Value("${redlease.instance-id}") String instance) {
        return new JmsContainerPathsApplication.Orders(instance);
    }
}
