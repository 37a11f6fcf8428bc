package io.redlease.boot.lifecycle;

import io.redlease.core.annotation.LeaderOnly;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Session;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.jms.annotation.EnableJms;
import org.springframework.jms.annotation.JmsListener;
import org.springframework.jms.config.SimpleJmsListenerContainerFactory;
import org.springframework.jms.core.JmsTemplate;
import org.springframework.jms.listener.DefaultMessageListenerContainer;
import org.springframework.jms.listener.SessionAwareMessageListener;

/**
 * JMS listener containers declared on paths other than Spring Boot's factory: a container declared
 * as a {@code @LeaderOnly} bean ({@code test.path=bean}), and a {@code @JmsListener} container of a
 * {@code SimpleJmsListenerContainerFactory} ({@code test.path=simple}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableJms
class JmsContainerPathsApplication {

    /** Every message consumed by any instance: "instance:body". */
    static final List<String> consumed = new CopyOnWriteArrayList<>();

    @Bean
    ActiveMQConnectionFactory connectionFactory(
            @Value("${test.artemis.url}") String url,
            @Value("${redlease.instance-id}") String instance) {
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(url);
        factory.setUser(instance);
        factory.setPassword("");
        return factory;
    }

    @Bean
    JmsTemplate jmsTemplate(ConnectionFactory connectionFactory) {
        return new JmsTemplate(connectionFactory);
    }

    /** A container declared as a bean: Spring's defaults, not transacted, AUTO_ACKNOWLEDGE. */
    @Bean
    @ConditionalOnProperty(name = "test.path", havingValue = "bean")
    OrdersContainer ordersContainer(
            ConnectionFactory connectionFactory,
            @Value("${test.queue}") String queue,
            @Value("${test.transacted:false}") boolean transacted,
            @Value("${test.acknowledge-mode:" + Session.AUTO_ACKNOWLEDGE + "}") int mode,
            @Value("${redlease.instance-id}") String instance) {
        OrdersContainer container = new OrdersContainer();
        container.setConnectionFactory(connectionFactory);
        container.setDestinationName(queue);
        container.setSessionTransacted(transacted);
        container.setSessionAcknowledgeMode(mode);
        container.setReceiveTimeout(100L);
        container.setMessageListener(
                (SessionAwareMessageListener<jakarta.jms.Message>)
                        (message, session) ->
                                consumed.add(instance + ":" + message.getBody(String.class)));
        return container;
    }

    /** A leader-only listener container declared as a bean. */
    @LeaderOnly
    static class OrdersContainer extends DefaultMessageListenerContainer {}

    /** The simple factory's containers: transacted, started by redlease only. */
    @Bean
    @ConditionalOnProperty(name = "test.path", havingValue = "simple")
    SimpleJmsListenerContainerFactory jmsListenerContainerFactory(
            ConnectionFactory connectionFactory) {
        SimpleJmsListenerContainerFactory factory = new SimpleJmsListenerContainerFactory();
        factory.setConnectionFactory(connectionFactory);
        factory.setSessionTransacted(true);
        factory.setAutoStartup(false);
        return factory;
    }

    @Bean
    @ConditionalOnProperty(name = "test.path", havingValue = "simple")
    Orders ordersListener(@Value("${redlease.instance-id}") String instance) {
        return new Orders(instance);
    }

    /** Consumes the test's queue; its container starts only on the leader. */
    static class Orders {

        private final String instance;

        Orders(String instance) {
            this.instance = instance;
        }

        @JmsListener(id = "orders", destination = "${test.queue}")
        void consume(String body) {
            consumed.add(instance + ":" + body);
        }
    }
}
