package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

class PostgresServerTests {

    @Test
    void startsItsOwnServerOnAFreeLoopbackPortWithDatabaseTestAndTrustAuthentication()
            throws Exception {
        PostgresServer server = PostgresServer.shared();
        assertThat(server.kind()).isEqualTo(ServerKind.MANAGED);
        assertThat(server.port()).isNotEqualTo(5432).isNotIn(Ports.RESERVED.keySet());
        assertThat(server.jdbcUrl())
                .isEqualTo("jdbc:postgresql://127.0.0.1:" + server.port() + "/test");
        try (Connection connection =
                        DriverManager.getConnection(
                                server.jdbcUrl(), server.username(), server.password());
                Statement statement = connection.createStatement();
                ResultSet row =
                        statement.executeQuery(
                                "SELECT current_database(), current_user,"
                                        + " current_setting('port')")) {
            assertThat(row.next()).isTrue();
            assertThat(row.getString(1)).isEqualTo("test");
            assertThat(row.getString(2)).isEqualTo("postgres");
            assertThat(row.getInt(3)).isEqualTo(server.port());
        }
        assertThat(PostgresServer.shared()).isSameAs(server);
    }

    @Test
    void asRootTheServerRunsAsTheUnprivilegedOwnerOfItsDirectory() {
        PostgresServer server = PostgresServer.shared();
        int serverUid = RunAs.uidOf(Path.of("/proc", Long.toString(server.pid())));
        int dirUid = RunAs.uidOf(server.dir());
        if (ServersTestSupport.jvmIsRoot()) {
            assertThat(serverUid).as("uid of the postgres process").isPositive().isEqualTo(dirUid);
        } else {
            assertThat(serverUid).as("uid of the postgres process").isEqualTo(dirUid);
        }
    }

    @Test
    void closeStopsTheServerAndDeletesItsDirectory() {
        PostgresServer server = PostgresServer.start();
        long pid = server.pid();
        Path dir = server.dir();
        server.close();
        assertThat(ServersTestSupport.isGone(pid)).isTrue();
        assertThat(dir).doesNotExist();
        server.close();
    }

    @Test
    void withNoBinaryNoVariableAndNoDockerItFailsWithOneLineNamingThePackage() {
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> PostgresServer.start(null, Binaries.of("", false), () -> false))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageContaining("apt-get install postgresql")
                .withMessageContaining("brew install postgresql")
                .withMessageContaining(PostgresServer.URL_ENV);
    }

    @Test
    void theVariableNamesTheServerAndNothingIsStarted() throws Exception {
        PostgresServer shared = PostgresServer.shared();
        String url = "postgresql://postgres@127.0.0.1:" + shared.port() + "/test";
        try (PostgresServer external =
                PostgresServer.start(url, Binaries.of("", false), () -> false)) {
            assertThat(external.kind()).isEqualTo(ServerKind.EXTERNAL);
            assertThat(external.jdbcUrl()).isEqualTo(shared.jdbcUrl());
            try (Connection connection =
                    DriverManager.getConnection(
                            external.jdbcUrl(), external.username(), external.password())) {
                assertThat(connection.isValid(5)).isTrue();
            }
        }
        assertThat(shared.isClosed()).isFalse();
    }

    @Test
    void theVariablePointingAtAClosedPortFailsWithOneLine() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        String url = "postgresql://127.0.0.1:" + closed + "/test";
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> PostgresServer.start(url, Binaries.of("", false), () -> false))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageStartingWith(
                        "The PostgreSQL server named by REDLEASE_TEST_POSTGRES_URL does not accept"
                                + " connections at 127.0.0.1:"
                                + closed);
    }

    @Test
    void postmasterPidSaysReadyOnlyForThisProcessAndPort() {
        PostgresServer server = PostgresServer.shared();
        Path data = server.dir().resolve("data");
        assertThat(PostgresServer.isReady(data, server.pid(), server.port())).isTrue();
        assertThat(PostgresServer.isReady(data, server.pid() + 1, server.port())).isFalse();
        assertThat(PostgresServer.isReady(data, server.pid(), server.port() + 1)).isFalse();
    }
}
