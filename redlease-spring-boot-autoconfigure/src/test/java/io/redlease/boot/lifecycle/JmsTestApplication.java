package io.redlease.boot.lifecycle;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.Session;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jms.annotation.EnableJms;
import org.springframework.jms.annotation.JmsListener;
import org.springframework.jms.config.DefaultJmsListenerContainerFactory;
import org.springframework.jms.core.JmsTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.jta.JtaTransactionManager;
import org.springframework.transaction.support.SimpleTransactionStatus;

/**
 * An application whose JMS listener "orders" runs only on the leader, on an Artemis broker; its
 * connection factory logs in as the instance id, so the broker tells the instances' sessions apart.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableJms
class JmsTestApplication {

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

    /**
     * The listener containers' factory: its containers do not start with the application (unless
     * {@code test.auto-startup=true}); transacted unless {@code test.transacted=false}, then in the
     * acknowledgement mode {@code test.acknowledge-mode}; with a transaction manager when {@code
     * test.transaction-manager} is {@code jta} or {@code other}; on one shared connection with the
     * client id {@code test.client-id} if it is set.
     */
    @Bean
    DefaultJmsListenerContainerFactory jmsListenerContainerFactory(
            ConnectionFactory connectionFactory,
            @Value("${test.transacted:true}") boolean transacted,
            @Value("${test.acknowledge-mode:" + Session.AUTO_ACKNOWLEDGE + "}") int mode,
            @Value("${test.transaction-manager:none}") String manager,
            @Value("${test.auto-startup:false}") boolean autoStartup,
            @Value("${test.client-id:}") String clientId) {
        DefaultJmsListenerContainerFactory factory = new DefaultJmsListenerContainerFactory();
        if (clientId.isEmpty()) {
            factory.setConnectionFactory(connectionFactory);
        } else {
            // One shared connection with a client id, as durable subscriptions take.
            org.springframework.jms.connection.SingleConnectionFactory single =
                    new org.springframework.jms.connection.SingleConnectionFactory(
                            connectionFactory);
            single.setClientId(clientId);
            factory.setConnectionFactory(single);
        }
        factory.setSessionTransacted(transacted);
        factory.setSessionAcknowledgeMode(mode);
        factory.setReceiveTimeout(100L);
        factory.setAutoStartup(autoStartup);
        switch (manager) {
            case "jta" -> factory.setTransactionManager(new JtaTransactionManager());
            case "other" -> factory.setTransactionManager(new OtherTransactionManager());
            default -> {}
        }
        return factory;
    }

    @Bean
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

    /** A transaction manager of no JMS resource, not JTA: it does not cover a JMS receive. */
    static class OtherTransactionManager implements PlatformTransactionManager {

        @Override
        public TransactionStatus getTransaction(@Nullable TransactionDefinition definition) {
            return new SimpleTransactionStatus();
        }

        @Override
        public void commit(TransactionStatus status) {}

        @Override
        public void rollback(TransactionStatus status) {}
    }
}
