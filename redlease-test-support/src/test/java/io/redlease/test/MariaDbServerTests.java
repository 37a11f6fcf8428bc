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

class MariaDbServerTests {

    @Test
    void startsItsOwnServerOnAFreeLoopbackPortWithDatabaseTestAndRootWithoutPassword()
            throws Exception {
        MariaDbServer server = MariaDbServer.shared();
        assertThat(server.kind()).isEqualTo(ServerKind.MANAGED);
        assertThat(server.port()).isNotEqualTo(3306).isNotIn(Ports.RESERVED.keySet());
        assertThat(server.jdbcUrl())
                .isEqualTo("jdbc:mariadb://127.0.0.1:" + server.port() + "/test");
        assertThat(server.username()).isEqualTo("root");
        assertThat(server.password()).isEmpty();
        try (Connection connection =
                        DriverManager.getConnection(
                                server.jdbcUrl(), server.username(), server.password());
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE rl_fixture_check (id INT PRIMARY KEY) ENGINE=InnoDB");
            statement.execute("INSERT INTO rl_fixture_check VALUES (1)");
            try (ResultSet row =
                    statement.executeQuery(
                            "SELECT DATABASE(), @@port, (SELECT count(*) FROM rl_fixture_check)")) {
                assertThat(row.next()).isTrue();
                assertThat(row.getString(1)).isEqualTo("test");
                assertThat(row.getInt(2)).isEqualTo(server.port());
                assertThat(row.getInt(3)).isEqualTo(1);
            } finally {
                statement.execute("DROP TABLE rl_fixture_check");
            }
        }
        assertThat(MariaDbServer.shared()).isSameAs(server);
    }

    @Test
    void asRootTheServerRunsAsTheUnprivilegedOwnerOfItsDirectory() {
        MariaDbServer server = MariaDbServer.shared();
        int serverUid = RunAs.uidOf(Path.of("/proc", Long.toString(server.pid())));
        int dirUid = RunAs.uidOf(server.dir());
        if (ServersTestSupport.jvmIsRoot()) {
            assertThat(serverUid).as("uid of the mariadbd process").isPositive().isEqualTo(dirUid);
        } else {
            assertThat(serverUid).as("uid of the mariadbd process").isEqualTo(dirUid);
        }
    }

    @Test
    void closeStopsTheServerAndDeletesItsDirectory() {
        MariaDbServer server = MariaDbServer.start();
        long pid = server.pid();
        Path dir = server.dir();
        server.close();
        assertThat(ServersTestSupport.isGone(pid)).isTrue();
        assertThat(dir).doesNotExist();
    }

    @Test
    void withNoBinaryNoVariableAndNoDockerItFailsWithOneLineNamingThePackage() {
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> MariaDbServer.start(null, Binaries.of("", false), () -> false))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageContaining("apt-get install mariadb-server")
                .withMessageContaining("brew install mariadb")
                .withMessageContaining(MariaDbServer.URL_ENV);
    }

    @Test
    void theVariableNamesTheServerAndNothingIsStarted() throws Exception {
        MariaDbServer shared = MariaDbServer.shared();
        String url = "jdbc:mariadb://127.0.0.1:" + shared.port() + "/test?user=root";
        try (MariaDbServer external =
                MariaDbServer.start(url, Binaries.of("", false), () -> false)) {
            assertThat(external.kind()).isEqualTo(ServerKind.EXTERNAL);
            assertThat(external.jdbcUrl()).isEqualTo(shared.jdbcUrl());
            assertThat(external.username()).isEqualTo("root");
        }
        assertThat(shared.isClosed()).isFalse();
    }

    @Test
    void theVariablePointingAtAClosedPortFailsWithOneLine() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        String url = "mariadb://root@127.0.0.1:" + closed + "/test";
        assertThatExceptionOfType(MissingServerException.class)
                .isThrownBy(() -> MariaDbServer.start(url, Binaries.of("", false), () -> false))
                .satisfies(ServersTestSupport::isOneLineWithoutStackTrace)
                .withMessageStartingWith(
                        "The MariaDB server named by REDLEASE_TEST_MARIADB_URL does not accept"
                                + " connections at 127.0.0.1:"
                                + closed);
    }
}
