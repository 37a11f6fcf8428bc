package io.redlease.test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A real PostgreSQL server for the tests: database {@code test}, user {@code postgres}, no password
 * (trust authentication).
 *
 * <p>{@link #start()} picks the server in this order: the URL in {@value #URL_ENV} if set; else a
 * server of its own from {@code initdb} and {@code postgres} found on the {@code PATH} or in the
 * usual install locations ({@code /usr/lib/postgresql/<version>/bin}, Homebrew's {@code
 * postgresql@<version>}), initialised into a fresh temporary directory and started on a free
 * loopback port, never 5432; else a {@code postgres} container when Docker is available; else it
 * throws {@link MissingServerException}, whose one-line message names the package to install.
 *
 * <p>PostgreSQL refuses to run as root. When the tests run as root, as CI does, the server runs as
 * the {@code postgres} user (or {@code nobody}), through {@code setpriv} or {@code runuser}, in a
 * directory handed to that user.
 *
 * <p>{@link #shared()} gives one server to the whole test JVM, ended at exit: by the JVM shutdown
 * hook, or by a watchdog process if the JVM is killed.
 */
public final class PostgresServer extends DatabaseServer {

    /**
     * The environment variable naming an external server instead: {@code
     * postgresql://[user[:password]@]host[:port]/database} (user {@code postgres} if none), or the
     * same as a JDBC URL, {@code jdbc:postgresql://host:port/database?user=…&password=…}.
     */
    public static final String URL_ENV = "REDLEASE_TEST_POSTGRES_URL";

    static final String MISSING_MESSAGE =
            "No PostgreSQL for the tests: initdb and postgres are neither on the PATH nor in"
                    + " /usr/lib/postgresql/<version>/bin, "
                    + URL_ENV
                    + " is not set and Docker is not available. Install it: `apt-get install"
                    + " postgresql` (the whole suite needs `apt-get install postgresql"
                    + " mariadb-server rabbitmq-server redis-server`) or `brew install"
                    + " postgresql@17`.";

    static final List<String> USUAL_DIRS =
            List.of(
                    "/usr/lib/postgresql/*/bin",
                    "/usr/pgsql-*/bin",
                    "/opt/homebrew/opt/postgresql@*/bin",
                    "/usr/local/opt/postgresql@*/bin",
                    "/opt/homebrew/bin",
                    "/usr/local/bin",
                    "/Applications/Postgres.app/Contents/Versions/latest/bin");

    static final String IMAGE = "postgres:17-alpine";
    private static final String LOOPBACK = "127.0.0.1";
    private static final String DATABASE = "test";
    private static final String USER = "postgres";
    private static final Duration SETUP_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(60));
    private static final Duration START_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(60));
    private static final int FREE_PORT_ATTEMPTS = 5;
    private static final Consumer<Map<String, String>> NO_CHANGE = env -> {};

    private static final SharedServer<PostgresServer> SHARED =
            new SharedServer<>(PostgresServer::start, PostgresServer::isClosed);

    private PostgresServer(
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
                kind,
                "postgresql",
                host,
                port,
                database,
                username,
                password,
                workspace,
                process,
                container);
    }

    /**
     * Returns the server shared by the whole test JVM, starting it on first use; tests must not
     * close it. If it cannot be started, every call throws the same exception.
     *
     * @return the running shared server
     * @throws MissingServerException if there is no PostgreSQL to be had, saying what to install
     */
    public static PostgresServer shared() {
        return SHARED.get();
    }

    /**
     * Starts (or connects to) a server of the caller's own, to close when done.
     *
     * @return a running server
     * @throws MissingServerException if there is no PostgreSQL to be had, saying what to install
     */
    public static PostgresServer start() {
        return start(
                ServerUrl.env(URL_ENV),
                Binaries.fromEnvironment(),
                ContainerServer::dockerAvailable);
    }

    static PostgresServer start(
            @Nullable String externalUrl, Binaries binaries, BooleanSupplier dockerAvailable) {
        Path bin = binaries.findDir(List.of("initdb", "postgres"), USUAL_DIRS);
        ServerKind kind = ServerKind.choose(externalUrl, bin != null, dockerAvailable);
        if (kind == null) {
            throw new MissingServerException(MISSING_MESSAGE);
        }
        return switch (kind) {
            case EXTERNAL -> external(externalUrl);
            case MANAGED -> startManaged(bin);
            case CONTAINER -> startContainer();
        };
    }

    private static PostgresServer external(@Nullable String value) {
        ServerUrl url =
                ServerUrl.parse(
                        URL_ENV,
                        String.valueOf(value),
                        List.of("postgresql", "postgres"),
                        5432,
                        USER,
                        "",
                        DATABASE);
        url.requireReachable("PostgreSQL server", URL_ENV);
        return new PostgresServer(
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

    private static PostgresServer startManaged(@Nullable Path bin) {
        if (bin == null) {
            throw new IllegalStateException("no PostgreSQL binaries");
        }
        Workspace workspace = Workspace.create("redlease-postgres");
        try {
            RunAs runAs = RunAs.forDirectory(workspace.dir(), "PostgreSQL", List.of(USER), URL_ENV);
            runAs.own(workspace.dir());
            Path data = workspace.dir().resolve("data");
            String postgres = bin.resolve("postgres").toString();
            workspace.run(
                    "initdb",
                    runAs.wrap(
                            List.of(
                                    bin.resolve("initdb").toString(),
                                    "-D",
                                    data.toString(),
                                    "-U",
                                    USER,
                                    "--auth=trust",
                                    "-E",
                                    "UTF8",
                                    "--no-locale",
                                    "--no-sync")),
                    NO_CHANGE,
                    null,
                    SETUP_TIMEOUT);
            // Single-user mode creates the database before the server listens: no client needed.
            workspace.run(
                    "create-database",
                    runAs.wrap(
                            List.of(
                                    postgres,
                                    "--single",
                                    "-D",
                                    data.toString(),
                                    "-F",
                                    "-c",
                                    "exit_on_error=true",
                                    "postgres")),
                    NO_CHANGE,
                    "CREATE DATABASE " + DATABASE + ";\n",
                    SETUP_TIMEOUT);
            for (int attempt = 1; ; attempt++) {
                int port = Ports.freeLoopbackPort();
                Path log = workspace.dir().resolve("postgres.log");
                ManagedProcess process =
                        workspace.start(
                                "postgres",
                                runAs.wrap(serverCommand(postgres, data, port, workspace.dir())),
                                NO_CHANGE,
                                log,
                                "QUIT");
                try {
                    workspace.awaitReady(
                            process,
                            log,
                            START_TIMEOUT,
                            () -> isReady(data, process.pid(), port),
                            tail -> tail.contains("Address already in use"));
                    return new PostgresServer(
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
                                "Could not start postgres: port " + port + " is in use", ex);
                    }
                }
            }
        } catch (RuntimeException | Error ex) {
            workspace.close();
            throw ex;
        }
    }

    private static List<String> serverCommand(String postgres, Path data, int port, Path dir) {
        return List.of(
                postgres,
                "-D",
                data.toString(),
                "-h",
                LOOPBACK,
                "-p",
                Integer.toString(port),
                "-k",
                dir.toString(),
                // A throwaway server: durability buys the tests nothing.
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off");
    }

    /**
     * Returns whether {@code postmaster.pid} says that this process listens on the port and accepts
     * connections ({@code pg_ctl -w} reads the same line).
     */
    static boolean isReady(Path data, long pid, int port) {
        try {
            List<String> lines =
                    Files.readAllLines(data.resolve("postmaster.pid"), StandardCharsets.UTF_8);
            return lines.size() >= 8
                    && lines.get(0).strip().equals(Long.toString(pid))
                    && lines.get(3).strip().equals(Integer.toString(port))
                    && lines.get(7).strip().equals("ready");
        } catch (IOException ex) {
            return false;
        }
    }

    private static PostgresServer startContainer() {
        ContainerServer container =
                ContainerServer.start(
                        IMAGE,
                        Map.of("POSTGRES_HOST_AUTH_METHOD", "trust", "POSTGRES_DB", DATABASE),
                        ".*database system is ready to accept connections.*\\n",
                        2,
                        5432);
        return new PostgresServer(
                ServerKind.CONTAINER,
                container.host(),
                container.port(5432),
                DATABASE,
                USER,
                "",
                null,
                null,
                container);
    }
}
