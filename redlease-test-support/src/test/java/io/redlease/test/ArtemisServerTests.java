package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.activemq.artemis.api.core.client.ActiveMQClient;
import org.apache.activemq.artemis.api.core.client.ClientConsumer;
import org.apache.activemq.artemis.api.core.client.ClientMessage;
import org.apache.activemq.artemis.api.core.client.ClientProducer;
import org.apache.activemq.artemis.api.core.client.ClientSession;
import org.apache.activemq.artemis.api.core.client.ClientSessionFactory;
import org.apache.activemq.artemis.api.core.client.ServerLocator;
import org.junit.jupiter.api.Test;

class ArtemisServerTests {

    @Test
    void aClientOverTcpSendsToAndReceivesFromAQueueOfTheTestsOwn() throws Exception {
        ArtemisServer broker = ArtemisServer.shared();
        assertThat(broker.port())
                .isNotIn(Ports.RESERVED.keySet())
                .isNotEqualTo(ArtemisServer.DEFAULT_PORT);
        assertThat(broker.url()).isEqualTo("tcp://127.0.0.1:" + broker.port());
        assertThat(ArtemisServer.shared()).isSameAs(broker);
        String queue = broker.newQueue("orders");
        try (ServerLocator locator = ActiveMQClient.createServerLocator(broker.url());
                ClientSessionFactory factory = locator.createSessionFactory();
                ClientSession session =
                        factory.createSession("fixture-test", "", false, true, true, false, 0)) {
            assertThat(broker.sessionsOpenedBy("fixture-test")).isPositive();
            ClientProducer producer = session.createProducer(queue);
            ClientMessage message = session.createMessage(true);
            message.getBodyBuffer().writeString("hello");
            producer.send(message);
            assertThat(broker.messageCount(queue)).isEqualTo(1);
            session.start();
            ClientConsumer consumer = session.createConsumer(queue);
            ClientMessage received = consumer.receive(10_000);
            assertThat(received).isNotNull();
            received.acknowledge();
            assertThat(received.getBodyBuffer().readString()).isEqualTo("hello");
        } finally {
            broker.deleteQueue(queue);
        }
        assertThat(broker.sessionsOpenedBy("nobody")).isZero();
    }
}
