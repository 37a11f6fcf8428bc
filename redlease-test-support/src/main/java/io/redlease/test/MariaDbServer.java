package io.redlease.test;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A real MariaDB server for the tests: database {@code test}, user {@code root} without a password.
 *
 * <p>{@link #start()} picks the server in this order: the URL in {@value #URL_ENV} if set; else a
 * server of its own from {@code mariadb-install-db} and {@code mariadbd} found on the {@code PATH}
 * or in the usual install locations ({@code /usr/sbin}, Homebrew), installed into a fresh temporary
 * directory and started on a free loopback port, never 3306, with no option files read; else a
 * {@code mariadb} container when Docker is available; else it throws {@link
 * MissingServerException}, whose one-line message names the package to install.
 *
 * <p>When the tests run as root, the server runs as the {@code mysql} user (or {@code nobody}), as
 * {@link PostgresServer} does. {@link #shared()} gives one server to the whole test JVM, ended at
 * exit: by the JVM shutdown hook, or by a watchdog process if the JVM is killed.
 */
public final class MariaDbServer extends DatabaseServer {

    /**
     * The environment variable naming an external server instead: {@code
     * mariadb://[user[:password]@]host[:port]/database} (user {@code root} if none; {@code
     * mysql://} works too), or the same as a JDBC URL, {@code
     * jdbc:mariadb://host:port/database?user=…}.
     */
    public static final String URL_ENV = "REDLEASE_TEST_MARIADB_URL";

    static final String MISSING_MESSAGE =
            "No MariaDB for the tests: mariadb-install-db and mariadbd are neither on the PATH nor"
                    + " in /usr/bin and /usr/sbin, "
                    + URL_ENV
                    + " is not set and Docker is not available. Install it: `apt-get install"
                    + " mariadb-server` (the whole suite needs `apt-get install postgresql"
                    + " mariadb-server rabbitmq-server redis-server`) or `brew install mariadb`.";

    static final List<String> INSTALL_DIRS =
            List.of(
                    "/usr/bin",
                    "/usr/local/bin",
                    "/opt/homebrew/bin",
                    "/opt/homebrew/opt/mariadb/bin",
                    "/usr/local/opt/mariadb/bin");
    static final List<String> SERVER_DIRS =
            List.of(
                    "/usr/sbin",
                    "/usr/libexec",
                    "/usr/local/sbin",
                    "/usr/bin",
                    "/usr/local/bin",
                    "/opt/homebrew/bin",
                    "/opt/homebrew/opt/mariadb/bin",
                    "/usr/local/opt/mariadb/bin");

    static final String IMAGE = "mariadb:11.4";
    private static final String LOOPBACK = "127.0.0.1";
    private static final String DATABASE = "test";
    private static final String USER = "root";
    private static final Duration SETUP_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(60));
    private static final Duration START_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(60));
    private static final int PROBE_TIMEOUT_MILLIS = 1_000;
    private static final int FREE_PORT_ATTEMPTS = 5;
    private static final Consumer<Map<String, String>> NO_CHANGE = env -> {};

    private static final SharedServer<MariaDbServer> SHARED =
            new SharedServer<>(MariaDbServer::start, MariaDbServer::isClosed);

    private MariaDbServer(
            ServerKind kind,
            String host,
            int port,
            String database,
            String username,
            String password,
            @Nullable Workspace workspace,
            @Nullable ManagedProcess process,
            @Nullable AutoCloseable container) {
        super(
                kind, "mariadb", host, port, database, username, password, workspace, process,
                container);
    }

    /**
     * Returns the server shared by the whole test JVM, starting it on first use; tests must not
     * close it. If it cannot be started, every call throws the same exception.
     *
     * @return the running shared server
     * @throws MissingServerException if there is no MariaDB to be had, saying what to install
     */
    public static MariaDbServer shared() {
        return SHARED.get();
    }

    /**
     * Starts (or connects to) a server of the caller's own, to close when done.
     *
     * @return a running server
     * @throws MissingServerException if there is no MariaDB to be had, saying what to install
     */
    public static MariaDbServer start() {
        return start(
                ServerUrl.env(URL_ENV),
                Binaries.fromEnvironment(),
                ContainerServer::dockerAvailable);
    }

    static MariaDbServer start(
            @Nullable String externalUrl, Binaries binaries, BooleanSupplier dockerAvailable) {
        Path install = binaries.find("mariadb-install-db", INSTALL_DIRS);
        Path server = binaries.find("mariadbd", SERVER_DIRS);
        boolean found = install != null && server != null;
        ServerKind kind = ServerKind.choose(externalUrl, found, dockerAvailable);
        if (kind == null) {
            throw new MissingServerException(MISSING_MESSAGE);
        }
        return switch (kind) {
            case EXTERNAL -> external(externalUrl);
            case MANAGED -> startManaged(install, server);
            case CONTAINER -> startContainer();
        };
    }

    private static MariaDbServer external(@Nullable String value) {
        ServerUrl url =
                ServerUrl.parse(
                        URL_ENV,
                        String.valueOf(value),
                        List.of("mariadb", "mysql"),
                        3306,
                        USER,
                        "",
                        DATABASE);
        url.requireReachable("MariaDB server", URL_ENV);
        return new MariaDbServer(
                ServerKind.EXTERNAL,
                url.host(),
                url.port(),
                url.path(),
                url.user(),
                url.password(),
                null,
                null,
                null);
    }

    private static MariaDbServer startManaged(@Nullable Path install, @Nullable Path server) {
        if (install == null || server == null) {
            throw new IllegalStateException("no MariaDB binaries");
        }
        Workspace workspace = Workspace.create("redlease-mariadb");
        try {
            Path dir = workspace.dir();
            RunAs runAs = RunAs.forDirectory(dir, "MariaDB", List.of("mysql"), URL_ENV);
            Path data = dir.resolve("data");
            Path init = dir.resolve("init.sql");
            Files.writeString(init, "CREATE DATABASE IF NOT EXISTS " + DATABASE + ";\n");
            runAs.own(dir);
            workspace.run(
                    "mariadb-install-db",
                    runAs.wrap(
                            List.of(
                                    install.toString(),
                                    "--no-defaults",
                                    "--datadir=" + data,
                                    "--auth-root-authentication-method=normal",
                                    "--skip-test-db")),
                    NO_CHANGE,
                    null,
                    SETUP_TIMEOUT);
            for (int attempt = 1; ; attempt++) {
                int port = Ports.freeLoopbackPort();
                Path log = dir.resolve("mariadbd.log");
                Path errorLog = dir.resolve("error-" + attempt + ".log");
                ManagedProcess process =
                        workspace.start(
                                "mariadbd",
                                runAs.wrap(serverCommand(server, dir, data, init, errorLog, port)),
                                NO_CHANGE,
                                log,
                                "KILL");
                try {
                    workspace.awaitReady(
                            process,
                            errorLog,
                            START_TIMEOUT,
                            () -> isReady(errorLog, port),
                            tail -> tail.contains("Address already in use"));
                    return new MariaDbServer(
                            ServerKind.MANAGED,
                            LOOPBACK,
                            port,
                            DATABASE,
                            USER,
                            "",
                            workspace,
                            process,
                            null);
                } catch (Workspace.PortInUseException ex) {
                    if (attempt >= FREE_PORT_ATTEMPTS) {
                        throw new IllegalStateException(
                                "Could not start mariadbd: port " + port + " is in use", ex);
                    }
                }
            }
        } catch (IOException ex) {
            workspace.close();
            throw new IllegalStateException("Could not prepare MariaDB in " + workspace.dir(), ex);
        } catch (RuntimeException | Error ex) {
            workspace.close();
            throw ex;
        }
    }

    private static List<String> serverCommand(
            Path server, Path dir, Path data, Path init, Path errorLog, int port) {
        return List.of(
                server.toString(),
                "--no-defaults",
                "--datadir=" + data,
                "--socket=" + dir.resolve("mariadbd.sock"),
                "--pid-file=" + dir.resolve("mariadbd.pid"),
                "--log-error=" + errorLog,
                "--bind-address=" + LOOPBACK,
                "--port=" + port,
                "--init-file=" + init,
                "--skip-name-resolve",
                // A throwaway server: durability buys the tests nothing.
                "--innodb-flush-log-at-trx-commit=0",
                "--innodb-buffer-pool-size=64M");
    }

    /**
     * Returns whether the server has said it is ready (after running its init file) and answers on
     * the port with a MariaDB handshake.
     */
    private static boolean isReady(Path errorLog, int port) {
        return Processes.tail(errorLog, 200).contains("ready for connections")
                && answersHandshake(port);
    }

    /** Returns whether the port answers with a protocol-10 handshake packet. */
    static boolean answersHandshake(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(LOOPBACK, port), PROBE_TIMEOUT_MILLIS);
            socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] header = new byte[4];
            in.readFully(header);
            return in.readUnsignedByte() == 10;
        } catch (IOException ex) {
            return false;
        }
    }

    private static MariaDbServer startContainer() {
        ContainerServer container =
                ContainerServer.start(
                        IMAGE,
                        Map.of(
                                "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD",
                                "1",
                                "MARIADB_DATABASE",
                                DATABASE),
                        ".*ready for connections.*\\n",
                        2,
                        3306);
        return new MariaDbServer(
                ServerKind.CONTAINER,
                container.host(),
                container.port(3306),
                DATABASE,
                USER,
                "",
                null,
                null,
                container);
    }
}
