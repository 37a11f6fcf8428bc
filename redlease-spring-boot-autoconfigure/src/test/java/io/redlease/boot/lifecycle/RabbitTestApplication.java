package io.redlease.boot.lifecycle;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;

/** An application whose RabbitMQ listener "orders" runs only on the leader. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableRabbit
class RabbitTestApplication {

    /** Every message consumed by any instance: "instance:body". */
    static final List<String> consumed = new CopyOnWriteArrayList<>();

    @Bean
    CachingConnectionFactory rabbitConnectionFactory(
            @Value("${test.rabbit.host}") String host,
            @Value("${test.rabbit.port}") int port,
            @Value("${test.rabbit.virtual-host}") String virtualHost) {
        CachingConnectionFactory factory = new CachingConnectionFactory(host, port);
        factory.setUsername("guest");
        factory.setPassword("guest");
        factory.setVirtualHost(virtualHost);
        return factory;
    }

    @Bean
    RabbitAdmin rabbitAdmin(CachingConnectionFactory connectionFactory) {
        return new RabbitAdmin(connectionFactory);
    }

    @Bean
    RabbitTemplate rabbitTemplate(CachingConnectionFactory connectionFactory) {
        return new RabbitTemplate(connectionFactory);
    }

    @Bean
    Queue orders() {
        return new Queue("orders");
    }

    /**
     * A queue named per application (as Spring AMQP names an anonymous one; not an AnonymousQueue,
     * whose arguments the broker of the tests refuses), exclusive to its connection.
     */
    @Bean
    @ConditionalOnBooleanProperty("test.anonymous-queue")
    Queue broadcasts() {
        return new Queue(
                new org.springframework.amqp.core.Base64UrlNamingStrategy("spring.gen-")
                        .generateName(),
                false,
                true,
                true);
    }

    /** An exclusive queue: owned by the connection that declares it first. */
    @Bean
    @ConditionalOnBooleanProperty("test.exclusive-queue")
    Queue replies() {
        return new Queue("replies", false, true, true);
    }

    @Bean
    SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory(
            CachingConnectionFactory connectionFactory,
            @Value("${test.rabbit.acknowledge-mode:AUTO}")
                    org.springframework.amqp.core.AcknowledgeMode mode,
            @Value("${test.rabbit.requeue-rejected:true}") boolean requeueRejected) {
        SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
        factory.setConnectionFactory(connectionFactory);
        factory.setAcknowledgeMode(mode);
        factory.setDefaultRequeueRejected(requeueRejected);
        return factory;
    }

    @Bean
    Orders ordersListener(@Value("${redlease.instance-id}") String instance) {
        return new Orders(instance);
    }

    @Bean
    @ConditionalOnBooleanProperty("test.auto-listener")
    AutoStarting autoStarting() {
        return new AutoStarting();
    }

    /** A leader-only container declared as a bean, acknowledging on delivery. */
    @Bean
    @ConditionalOnBooleanProperty("test.bean-container")
    BeanContainer beanContainer(CachingConnectionFactory connectionFactory) {
        BeanContainer container = new BeanContainer(connectionFactory);
        container.setQueueNames("orders");
        container.setAcknowledgeMode(org.springframework.amqp.core.AcknowledgeMode.NONE);
        container.setMessageListener(message -> {});
        return container;
    }

    /** A leader-only listener container bean. */
    @io.redlease.core.annotation.LeaderOnly
    static class BeanContainer
            extends org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer {

        BeanContainer(CachingConnectionFactory connectionFactory) {
            super(connectionFactory);
        }
    }

    /** Consumes the orders queue; its container starts only on the leader. */
    static class Orders {

        private final String instance;

        Orders(String instance) {
            this.instance = instance;
        }

        @RabbitListener(id = "orders", queues = "orders", autoStartup = "false")
        void consume(String body) {
            consumed.add(instance + ":" + body);
        }
    }

    /** A listener that starts with the application: refused as a leader-only listener. */
    static class AutoStarting {

        @RabbitListener(id = "auto", queues = "orders")
        void consume(String body) {}
    }
}
