package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(ServersExtension.class)
class ServersExtensionTests {

    @Test
    void injectsTheSharedServers(PostgresServer postgres, MariaDbServer mariadb) {
        assertThat(postgres).isSameAs(PostgresServer.shared());
        assertThat(mariadb).isSameAs(MariaDbServer.shared());
    }

    @Test
    void injectsTheSharedBroker(RabbitMqServer rabbit) {
        assertThat(rabbit).isSameAs(RabbitMqServer.shared());
    }
}
