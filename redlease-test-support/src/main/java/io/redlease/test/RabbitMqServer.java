package io.redlease.test;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A real RabbitMQ broker for the tests, with its management API: user {@code guest}, password
 * {@code guest}, and a fresh virtual host per test from {@link #newVirtualHost()}.
 *
 * <p>{@link #start()} picks the broker in this order: the URL in {@value #URL_ENV} if set; else a
 * broker of its own from {@code rabbitmq-server} and {@code epmd} found on the {@code PATH} or in
 * the usual install locations ({@code /usr/lib/rabbitmq/bin}, Homebrew's {@code sbin}), with its
 * own node name, its own {@code epmd}, Erlang cookie, data and log directories, on free loopback
 * ports (never 5672, 15672, 25672 or 4369); else a {@code rabbitmq} container when Docker is
 * available; else it throws {@link MissingServerException}, whose one-line message names the
 * package to install. It runs as the tests' user, root included.
 *
 * <p>A Spring Boot test points {@code spring.rabbitmq.host}, {@code .port}, {@code .username},
 * {@code .password} and {@code .virtual-host} at {@link #host()}, {@link #port()}, {@link
 * #username()}, {@link #password()} and a {@link #newVirtualHost()}; other clients take {@link
 * #amqpUrl(String)}. {@link #shared()} gives one broker to the whole test JVM, ended at exit: by
 * the JVM shutdown hook, or by a watchdog process if the JVM is killed.
 */
public final class RabbitMqServer extends FixtureServer {

    /**
     * The environment variable naming an external broker instead: {@code
     * amqp://[user:password@]host[:port][/virtual-host]} ({@code guest:guest} and {@code /} if
     * none).
     */
    public static final String URL_ENV = "REDLEASE_TEST_RABBITMQ_URL";

    /**
     * The environment variable giving an external broker's management API, {@code
     * http://host:port/}; {@code http://<host>:15672/} if unset.
     */
    public static final String MANAGEMENT_URL_ENV = "REDLEASE_TEST_RABBITMQ_MANAGEMENT_URL";

    static final String MISSING_MESSAGE =
            "No RabbitMQ for the tests: rabbitmq-server and epmd are neither on the PATH nor in"
                    + " /usr/lib/rabbitmq/bin, "
                    + URL_ENV
                    + " is not set and Docker is not available. Install it: `apt-get install"
                    + " rabbitmq-server` (the whole suite needs `apt-get install postgresql"
                    + " mariadb-server rabbitmq-server redis-server`) or `brew install rabbitmq`.";

    static final String IMAGE = "rabbitmq:4-management-alpine";
    static final String LOOPBACK = "127.0.0.1";
    static final String USER = "guest";

    private static final AtomicLong NAMES = new AtomicLong();
    private static final SharedServer<RabbitMqServer> SHARED =
            new SharedServer<>(RabbitMqServer::start, RabbitMqServer::isClosed);

    private final String host;
    private final int port;
    private final String username;
    private final String password;
    private final String virtualHost;
    private final RabbitMqManagement management;

    RabbitMqServer(
            ServerKind kind,
            String host,
            int port,
            String username,
            String password,
            String virtualHost,
            URI managementUrl,
            @Nullable Workspace workspace,
            @Nullable ManagedProcess process,
            @Nullable AutoCloseable container) {
        super(kind, workspace, process, container);
        this.host = host;
        this.port = port;
        this.username = username;
        this.password = password;
        this.virtualHost = virtualHost;
        this.management = new RabbitMqManagement(managementUrl, username, password);
    }

    /**
     * Returns the broker shared by the whole test JVM, starting it on first use; tests must not
     * close it, and use virtual hosts or queue names of their own. If it cannot be started, every
     * call throws the same exception.
     *
     * @return the running shared broker
     * @throws MissingServerException if there is no RabbitMQ to be had, saying what to install
     */
    public static RabbitMqServer shared() {
        return SHARED.get();
    }

    /**
     * Starts (or connects to) a broker of the caller's own, to close when done.
     *
     * @return a running broker
     * @throws MissingServerException if there is no RabbitMQ to be had, saying what to install
     */
    public static RabbitMqServer start() {
        return start(
                ServerUrl.env(URL_ENV),
                Binaries.fromEnvironment(),
                ContainerServer::dockerAvailable);
    }

    static RabbitMqServer start(
            @Nullable String externalUrl, Binaries binaries, BooleanSupplier dockerAvailable) {
        Path script = RabbitMqProcess.findServer(binaries);
        Path epmd = RabbitMqProcess.findEpmd(binaries);
        boolean found = script != null && epmd != null;
        ServerKind kind = ServerKind.choose(externalUrl, found, dockerAvailable);
        if (kind == null) {
            throw new MissingServerException(MISSING_MESSAGE);
        }
        return switch (kind) {
            case EXTERNAL -> external(String.valueOf(externalUrl));
            case MANAGED -> RabbitMqProcess.start(script, epmd);
            case CONTAINER -> startContainer();
        };
    }

    private static RabbitMqServer external(String value) {
        ServerUrl url = ServerUrl.parse(URL_ENV, value, List.of("amqp"), 5672, USER, USER, "/");
        url.requireReachable("RabbitMQ broker", URL_ENV);
        String management = ServerUrl.env(MANAGEMENT_URL_ENV);
        URI managementUrl =
                URI.create(management != null ? management : "http://" + url.host() + ":15672/");
        return new RabbitMqServer(
                ServerKind.EXTERNAL,
                url.host(),
                url.port(),
                url.user(),
                url.password(),
                url.path(),
                managementUrl,
                null,
                null,
                null);
    }

    private static RabbitMqServer startContainer() {
        ContainerServer container =
                ContainerServer.start(
                        IMAGE, Map.of(), ".*Server startup complete.*\\n", 1, 5672, 15672);
        return new RabbitMqServer(
                ServerKind.CONTAINER,
                container.host(),
                container.port(5672),
                USER,
                USER,
                "/",
                URI.create("http://" + container.host() + ":" + container.port(15672) + "/"),
                null,
                null,
                container);
    }

    /**
     * Returns the host to connect to.
     *
     * @return the host name or address, {@code 127.0.0.1} for a broker the fixture started
     */
    public String host() {
        return host;
    }

    /**
     * Returns the AMQP port; a free port for a broker the fixture started.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Returns the user to connect as, an administrator for a broker the fixture started.
     *
     * @return the user name, {@code guest} unless an external broker's URL names another
     */
    public String username() {
        return username;
    }

    /**
     * Returns the password of {@link #username()}.
     *
     * @return the password, {@code guest} unless an external broker's URL names another
     */
    public String password() {
        return password;
    }

    /**
     * Returns the broker's default virtual host, which tests share.
     *
     * @return {@code /} unless an external broker's URL names another
     */
    public String virtualHost() {
        return virtualHost;
    }

    /**
     * Returns an AMQP URI for the default virtual host, credentials included.
     *
     * @return {@code amqp://user:password@host:port/<virtual host, percent-encoded>}
     */
    public String amqpUrl() {
        return amqpUrl(virtualHost);
    }

    /**
     * Returns an AMQP URI for a virtual host, credentials included, for example one from {@link
     * #newVirtualHost()}.
     *
     * @param virtualHost the virtual host
     * @return {@code amqp://user:password@host:port/<virtual host, percent-encoded>}
     */
    public String amqpUrl(String virtualHost) {
        return "amqp://"
                + URLEncoder.encode(username, StandardCharsets.UTF_8)
                + ":"
                + URLEncoder.encode(password, StandardCharsets.UTF_8)
                + "@"
                + host
                + ":"
                + port
                + "/"
                + RabbitMqManagement.encode(virtualHost);
    }

    /**
     * Returns the base URL of the management HTTP API.
     *
     * @return {@code http://host:port/}
     */
    public URI managementUrl() {
        return management.base();
    }

    /**
     * Creates a virtual host of the caller's own, on which {@link #username()} may do everything:
     * queues, exchanges and bindings created there are invisible to other tests. Delete it with
     * {@link #deleteVirtualHost(String)}, or leave it to the end of the broker.
     *
     * @return the name of the new virtual host, {@code redlease-<n>-<hex>}
     * @throws IllegalStateException if the management API refuses (an external broker's user is not
     *     an administrator)
     */
    public String newVirtualHost() {
        String name = uniqueName("redlease");
        management.createVirtualHost(name, username);
        return name;
    }

    /**
     * Deletes a virtual host and everything in it; a missing one is no error.
     *
     * @param name the virtual host
     */
    public void deleteVirtualHost(String name) {
        management.deleteVirtualHost(name);
    }

    /**
     * Returns a name unique to this JVM and run, for a queue, exchange or virtual host: {@code
     * <prefix>-<n>-<hex>}.
     *
     * @param prefix what the name is for, for example {@code orders}
     * @return the name
     */
    public static String uniqueName(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet() + "-" + Long.toHexString(System.nanoTime());
    }

    @Override
    public String toString() {
        return "RabbitMqServer[amqp://"
                + host
                + ":"
                + port
                + " as "
                + username
                + ", "
                + origin()
                + "]";
    }
}
