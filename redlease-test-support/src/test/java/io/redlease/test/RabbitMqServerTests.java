package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RabbitMqServerTests {

    @Test
    void startsItsOwnBrokerOnFreeLoopbackPortsWithGuestAndTheManagementApi() throws Exception {
        RabbitMqServer broker = RabbitMqServer.shared();
        assertThat(broker.kind()).isEqualTo(ServerKind.MANAGED);
        assertThat(broker.port()).isNotIn(Ports.RESERVED.keySet());
        assertThat(broker.managementUrl().getPort()).isNotIn(Ports.RESERVED.keySet());
        assertThat(broker.amqpUrl())
                .isEqualTo("amqp://guest:guest@127.0.0.1:" + broker.port() + "/%2F");
        assertThat(RabbitMqServer.shared()).isSameAs(broker);
    }

    @Test
    void aFreshVirtualHostIsIsolatedAndUsableByTheUser() throws Exception {
        RabbitMqServer broker = RabbitMqServer.shared();
        String vhost = broker.newVirtualHost();
        String queue = RabbitMqServer.uniqueName("orders");
        try {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setUri(broker.amqpUrl(vhost));
            try (Connection connection = factory.newConnection();
                    Channel channel = connection.createChannel()) {
                channel.queueDeclare(queue, false, false, false, null);
                channel.confirmSelect();
                channel.basicPublish("", queue, null, "hello".getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(10_000);
                GetResponse got = channel.basicGet(queue, true);
                assertThat(got).isNotNull();
                assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("hello");
            }
            ConnectionFactory shared = new ConnectionFactory();
            shared.setUri(broker.amqpUrl());
            try (Connection connection = shared.newConnection()) {
                Channel channel = connection.createChannel(); // closed by the broker's refusal
                assertThatExceptionOfType(IOException.class)
                        .as("the queue is not visible in the default virtual host")
                        .isThrownBy(() -> channel.queueDeclarePassive(queue));
            }
        } finally {
            broker.deleteVirtualHost(vhost);
        }
        broker.deleteVirtualHost(vhost);
    }

    @Test
    void uniqueNamesDiffer() {
        assertThat(RabbitMqServer.uniqueName("q"))
                .startsWith("q-")
                .isNotEqualTo(RabbitMqServer.uniqueName("q"));
    }

    @Test
    void closeStopsTheBrokerAndItsEpmdAndDeletesTheirDirectory() {
        RabbitMqServer broker = RabbitMqServer.start();
        long pid = broker.pid();
        Path dir = broker.dir();
        broker.close();
        assertThat(ServersTestSupport.isGone(pid)).isTrue();
        assertThat(dir).doesNotExist();
    }

    @Test
    void withNoBinaryNoVariableAndNoDockerItFailsWithOneLineNamingThePackage() {
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> RabbitMqServer.start(null, Binaries.of("", false), () -> false))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageContaining("apt-get install rabbitmq-server")
                .withMessageContaining("brew install rabbitmq")
                .withMessageContaining(RabbitMqServer.URL_ENV);
    }

    @Test
    void theVariableNamesTheBrokerAndItsManagementApi() {
        RabbitMqServer shared = RabbitMqServer.shared();
        String url = "amqp://127.0.0.1:" + shared.port();
        RabbitMqServer external = RabbitMqServer.start(url, Binaries.of("", false), () -> false);
        assertThat(external.kind()).isEqualTo(ServerKind.EXTERNAL);
        assertThat(external.amqpUrl()).isEqualTo(shared.amqpUrl());
        assertThat(external.managementUrl().toString()).isEqualTo("http://127.0.0.1:15672/");
        external.close();
        assertThat(shared.isClosed()).isFalse();
    }

    @Test
    void theVariablePointingAtAClosedPortFailsWithOneLine() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        String url = "amqp://guest:guest@127.0.0.1:" + closed;
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> RabbitMqServer.start(url, Binaries.of("", false), () -> false))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageStartingWith(
                        "The RabbitMQ broker named by REDLEASE_TEST_RABBITMQ_URL does not accept"
                                + " connections at 127.0.0.1:"
                                + closed);
    }

    @Test
    void debiansUserSwitchingWrapperIsSkipped(@TempDir Path dir) throws IOException {
        Path wrapper = dir.resolve("wrapper");
        Files.writeString(
                wrapper, "#!/bin/sh\nsu rabbitmq -s /bin/sh -c \"/usr/lib/rabbitmq/bin/x\"\n");
        Path real = dir.resolve("real");
        Files.writeString(real, "#!/bin/sh\nexec erl \"$@\"\n");
        assertThat(RabbitMqProcess.isNotUserWrapper(wrapper)).isFalse();
        assertThat(RabbitMqProcess.isNotUserWrapper(real)).isTrue();
    }
}
