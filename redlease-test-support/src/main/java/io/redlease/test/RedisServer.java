package io.redlease.test;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.opentest4j.TestAbortedException;

/**
 * One real Redis server that tests talk to: an external server, a {@code redis-server} process
 * started by the fixture, or a Docker container.
 *
 * <p>{@link #start()} picks the server in this order: the URL in the {@value #URL_ENV} environment
 * variable if it is set; else a {@code redis-server} from the {@code PATH}, started on a free
 * loopback port with a fresh temporary directory and no persistence unless the {@link Options} ask
 * for it; else a {@code redis:7} container when Docker is available; else it throws {@link
 * IllegalStateException} saying what to install. It never skips silently.
 *
 * <p>Only a process the fixture started ({@link #isManaged()}) has levers for fault tests: {@link
 * #stop()}, {@link #kill()}, {@link #pause()}, {@link #resume()} and {@link #restart()}. On other
 * servers they throw {@link TestAbortedException}, so a test that needs them is reported as
 * aborted, not failed; a container supports {@link #stop()} only. Every process started is ended by
 * {@link #close()}, and by a JVM shutdown hook if the test run ends first.
 *
 * <p>The methods are thread-safe.
 */
public final class RedisServer implements AutoCloseable {

    /**
     * The environment variable naming an external server: {@code
     * redis://[user:pass@]host:port[/db]}.
     */
    public static final String URL_ENV = "REDLEASE_TEST_REDIS_URL";

    /** Where a server comes from. */
    public enum Kind {
        /** A {@code redis-server} process started by the fixture; all levers work. */
        MANAGED,
        /** A Testcontainers {@code redis:7} container; only {@link RedisServer#stop()} works. */
        CONTAINER,
        /** A server named by {@value RedisServer#URL_ENV}; no levers. */
        EXTERNAL
    }

    static final String BINARY = "redis-server";
    static final String NO_REDIS_MESSAGE =
            "No Redis server for the tests: redis-server is not on the PATH and Docker is not"
                    + " available. Install redis-server (for example `apt-get install"
                    + " redis-server` or `brew install redis`), or install and start Docker, or"
                    + " set "
                    + URL_ENV
                    + "=redis://host:port to use an existing server.";

    private static final List<String> USUAL_DIRS =
            List.of("/usr/bin", "/usr/local/bin", "/opt/homebrew/bin");
    private static final String LOOPBACK = "127.0.0.1";
    private static final String LOG_FILE = "redis.log";
    private static final String OUTPUT_FILE = "redis-server.out";
    private static final Duration START_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(15));
    private static final Duration STOP_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(5));
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration SIGNAL_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(5));
    private static final int FREE_PORT_ATTEMPTS = 5;

    private final Kind kind;
    private final Options options;
    private final String host;
    private final int port;
    private final @Nullable String username;
    private final @Nullable String password;
    private final int database;
    private final String url;
    private final @Nullable Path binary;
    private final @Nullable Slot slot;
    private final @Nullable ContainerRedis container;
    private final Processes.@Nullable Registration registration;

    private final Object lifecycle = new Object();
    private volatile boolean paused;
    private volatile boolean closed;
    private volatile int generation;

    private final ReentrantLock connectionLock = new ReentrantLock();
    private @Nullable RespClient connection;
    private int connectionGeneration;

    private RedisServer(
            Kind kind,
            Options options,
            String host,
            int port,
            @Nullable String username,
            @Nullable String password,
            int database,
            String url,
            @Nullable Path binary,
            @Nullable Slot slot,
            @Nullable ContainerRedis container,
            Processes.@Nullable Registration registration) {
        this.kind = kind;
        this.options = options;
        this.host = host;
        this.port = port;
        this.username = username;
        this.password = password;
        this.database = database;
        this.url = url;
        this.binary = binary;
        this.slot = slot;
        this.container = container;
        this.registration = registration;
    }

    /**
     * Starts (or connects to) a Redis server with default options: no password, no persistence.
     *
     * @return a running server; close it when done
     * @throws IllegalStateException if no Redis can be had, with a message saying what to install
     */
    public static RedisServer start() {
        return start(Options.defaults());
    }

    /**
     * Starts (or connects to) a Redis server configured by {@code options}.
     *
     * <p>If {@value #URL_ENV} is set and the options ask for anything an external server cannot be
     * told (persistence, a password, extra arguments, a port), this throws {@link
     * TestAbortedException}.
     *
     * @param options how to configure a server the fixture starts
     * @return a running server; close it when done
     * @throws IllegalStateException if no Redis can be had, with a message saying what to install
     */
    public static RedisServer start(Options options) {
        Objects.requireNonNull(options, "options must not be null");
        return start(
                options, System.getenv(URL_ENV), findBinary(), ContainerRedis::dockerAvailable);
    }

    static RedisServer start(
            Options options,
            @Nullable String externalUrl,
            @Nullable Path binary,
            BooleanSupplier dockerAvailable) {
        if (externalUrl != null && !externalUrl.isBlank()) {
            if (!options.isDefault()) {
                throw new TestAbortedException(
                        "This test needs a redis-server started by the fixture with "
                                + options
                                + ", but "
                                + URL_ENV
                                + " points at an external server");
            }
            return external(externalUrl.strip());
        }
        if (binary != null) {
            return startManaged(binary, options);
        }
        if (dockerAvailable.getAsBoolean()) {
            return startContainer(options);
        }
        throw new MissingServerException(NO_REDIS_MESSAGE);
    }

    /**
     * Returns a handle on an existing Redis server, checking that it answers {@code PING}; it has
     * no levers and {@link #close()} leaves the server running.
     *
     * @param url {@code redis://[[user]:password@]host[:port][/database]}
     * @return a handle on the server
     * @throws IllegalArgumentException if the URL is malformed
     * @throws IllegalStateException if the server does not answer
     */
    public static RedisServer external(String url) {
        Objects.requireNonNull(url, "url must not be null");
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException ex) {
            throw new IllegalArgumentException("url must be a redis:// URL but was " + url, ex);
        }
        if (!"redis".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException(
                    "url must look like redis://[user:password@]host:port[/db] but was " + url);
        }
        String user = null;
        String pass = null;
        String userInfo = uri.getUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            int colon = userInfo.indexOf(':');
            if (colon < 0) {
                pass = userInfo;
            } else {
                user = colon == 0 ? null : userInfo.substring(0, colon);
                pass = userInfo.substring(colon + 1);
            }
        }
        int db = 0;
        String path = uri.getPath();
        if (path != null && path.length() > 1) {
            try {
                db = Integer.parseInt(path.substring(1));
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException(
                        "url path must be a database number but was " + path, ex);
            }
        }
        int port = uri.getPort() < 0 ? 6379 : uri.getPort();
        RedisServer server =
                new RedisServer(
                        Kind.EXTERNAL,
                        Options.defaults(),
                        uri.getHost(),
                        port,
                        user,
                        pass,
                        db,
                        url,
                        null,
                        null,
                        null,
                        null);
        try {
            server.command("PING");
        } catch (RuntimeException ex) {
            server.close();
            throw new IllegalStateException(
                    "The Redis server at "
                            + uri.getHost()
                            + ":"
                            + port
                            + " does not answer PING: "
                            + ex.getMessage(),
                    ex);
        }
        return server;
    }

    private static RedisServer startManaged(Path binary, Options options) {
        Path dir;
        try {
            dir = Files.createTempDirectory("redlease-redis-");
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not create a directory for redis-server", ex);
        }
        Slot slot = new Slot(dir);
        Processes.Registration registration = Processes.onJvmExit(slot);
        try {
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            for (int attempt = 1; ; attempt++) {
                int port =
                        options.port != 0
                                ? Ports.requireNotReserved(options.port, "redis-server")
                                : freePort();
                try {
                    launch(binary, slot, port, options, deadline);
                    String url = localUrl(LOOPBACK, port, options.requirePass);
                    return new RedisServer(
                            Kind.MANAGED,
                            options,
                            LOOPBACK,
                            port,
                            null,
                            options.requirePass,
                            0,
                            url,
                            binary,
                            slot,
                            null,
                            registration);
                } catch (PortInUseException ex) {
                    boolean retry =
                            options.port == 0
                                    ? attempt < FREE_PORT_ATTEMPTS
                                    : System.nanoTime() - deadline < 0;
                    if (!retry) {
                        throw new IllegalStateException(
                                "Could not start redis-server: port " + port + " is in use", ex);
                    }
                    if (options.port != 0) {
                        Processes.pause(Duration.ofMillis(50));
                    }
                }
            }
        } catch (RuntimeException | Error ex) {
            slot.run();
            registration.cancel();
            throw ex;
        }
    }

    private static RedisServer startContainer(Options options) {
        List<String> args = new ArrayList<>(List.of(BINARY, "--protected-mode", "no"));
        args.addAll(List.of("--enable-debug-command", "yes"));
        args.addAll(options.configArgs());
        ContainerRedis container = ContainerRedis.start(args);
        Processes.Registration registration = Processes.onJvmExit(container::stop);
        String host = container.host();
        int port = container.port();
        String url = localUrl(host, port, options.requirePass);
        return new RedisServer(
                Kind.CONTAINER,
                options,
                host,
                port,
                null,
                options.requirePass,
                0,
                url,
                null,
                null,
                container,
                registration);
    }

    private static String localUrl(String host, int port, @Nullable String password) {
        String userInfo =
                password == null
                        ? ""
                        : ":" + URLEncoder.encode(password, StandardCharsets.UTF_8) + "@";
        return "redis://" + userInfo + host + ":" + port;
    }

    /** Starts a process on the port and waits until it answers PING as itself. */
    private static void launch(Path binary, Slot slot, int port, Options options, long deadline)
            throws PortInUseException {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(
                List.of(
                        "--bind",
                        LOOPBACK,
                        "--port",
                        Integer.toString(port),
                        "--dir",
                        slot.dir.toString(),
                        "--logfile",
                        slot.dir.resolve(LOG_FILE).toString(),
                        "--daemonize",
                        "no",
                        "--protected-mode",
                        "no",
                        "--enable-debug-command",
                        "local"));
        command.addAll(options.configArgs());
        ProcessBuilder builder =
                new ProcessBuilder(command)
                        .directory(slot.dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(
                                ProcessBuilder.Redirect.appendTo(
                                        slot.dir.resolve(OUTPUT_FILE).toFile()));
        Process process;
        try {
            process = builder.start();
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not run " + binary, ex);
        }
        slot.process = process;
        while (true) {
            if (!process.isAlive()) {
                String log = logTail(slot.dir);
                if (log.contains("Address already in use")) {
                    throw new PortInUseException(port);
                }
                throw new IllegalStateException(
                        "redis-server exited with code "
                                + process.exitValue()
                                + " before it answered PING on port "
                                + port
                                + "; log tail:\n"
                                + log);
            }
            if (answersAs(port, options.requirePass, process.pid())) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                process.destroyForcibly();
                Processes.awaitExit(process, STOP_TIMEOUT);
                throw new IllegalStateException(
                        "redis-server did not answer PING on "
                                + LOOPBACK
                                + ":"
                                + port
                                + " within "
                                + START_TIMEOUT.toSeconds()
                                + " s; log tail:\n"
                                + logTail(slot.dir));
            }
            Processes.pause(Duration.ofMillis(5));
        }
    }

    /** Returns whether the server on the port answers PING and is the process with that pid. */
    private static boolean answersAs(int port, @Nullable String password, long pid) {
        try (RespClient client = RespClient.connect(LOOPBACK, port, PROBE_TIMEOUT)) {
            if (password != null) {
                client.command("AUTH", password);
            }
            if (!"PONG".equals(client.command("PING"))) {
                return false;
            }
            Object info = client.command("INFO", "server");
            return info instanceof String text
                    && Long.toString(pid).equals(infoField(text, "process_id"));
        } catch (UncheckedIOException | RespErrorException ex) {
            return false;
        }
    }

    static @Nullable String infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).strip();
            }
        }
        return null;
    }

    private static String logTail(Path dir) {
        String output = Processes.tail(dir.resolve(OUTPUT_FILE), 20);
        String log = Processes.tail(dir.resolve(LOG_FILE), 30);
        return output.isEmpty() ? log : output + "\n" + log;
    }

    private static int freePort() {
        return Ports.freeLoopbackPort();
    }

    /**
     * Returns {@code redis-server} from the {@code PATH} or the usual install locations, as {@link
     * Binaries#fromEnvironment()} looks for it ({@code -Dredlease.test.serverPath} replaces both).
     */
    static @Nullable Path findBinary() {
        return Binaries.fromEnvironment().find(BINARY, USUAL_DIRS);
    }

    static @Nullable Path findOnPath(String name, @Nullable String path) {
        if (path == null) {
            return null;
        }
        for (String entry : path.split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(entry, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * Returns where this server comes from.
     *
     * @return the kind of server
     */
    public Kind kind() {
        return kind;
    }

    /**
     * Returns whether this is a {@code redis-server} process the fixture started, with all levers.
     *
     * @return {@code true} for a managed process
     */
    public boolean isManaged() {
        return kind == Kind.MANAGED;
    }

    /**
     * Returns the host to connect to.
     *
     * @return the host name or address, {@code 127.0.0.1} for a managed process
     */
    public String host() {
        return host;
    }

    /**
     * Returns the TCP port to connect to; a managed server keeps it across restarts.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Returns a URL for Redis clients, {@code redis://[:password@]host:port}; for an external
     * server, the URL it was given.
     *
     * @return the connection URL, including the password if there is one
     */
    public String url() {
        return url;
    }

    /**
     * Returns the password clients must send with {@code AUTH}.
     *
     * @return the password, or {@code null} if none is required
     */
    public @Nullable String password() {
        return password;
    }

    /**
     * Returns the operating system process id of the current (last started) process.
     *
     * @return the pid
     * @throws TestAbortedException if the server is not managed
     */
    public long pid() {
        return requireSlot("pid()").requireProcess().pid();
    }

    /**
     * Returns the working directory of a managed server, where its log and any AOF files live.
     *
     * @return the temporary directory, deleted by {@link #close()}
     * @throws TestAbortedException if the server is not managed
     */
    public Path dir() {
        return requireSlot("dir()").dir;
    }

    /**
     * Returns whether the server process (or container) is alive; a paused process counts as
     * running.
     *
     * @return {@code true} while alive
     * @throws TestAbortedException if the server is external
     */
    public boolean isRunning() {
        if (container != null) {
            return container.isRunning();
        }
        Process process = requireSlot("isRunning()").process;
        return process != null && process.isAlive();
    }

    /**
     * Returns whether the process is paused by {@link #pause()}.
     *
     * @return {@code true} between {@link #pause()} and {@link #resume()}
     */
    public boolean isPaused() {
        return paused;
    }

    /**
     * Stops the server gracefully: {@code SHUTDOWN NOSAVE}, then waits for the process to exit,
     * then sends {@code SIGKILL} if it has not exited within 5 seconds.
     *
     * <p>A paused process is resumed first. Stopping a stopped server does nothing; {@link
     * #restart()} starts it again.
     *
     * @throws TestAbortedException if the server is external
     */
    public void stop() {
        if (container != null) {
            synchronized (lifecycle) {
                ensureOpen();
                container.stop();
                generation++;
            }
            return;
        }
        Slot slot = requireSlot("stop()");
        synchronized (lifecycle) {
            ensureOpen();
            stopProcess(slot);
        }
    }

    private void stopProcess(Slot slot) {
        Process process = slot.process;
        if (process != null && process.isAlive()) {
            if (paused) {
                continueProcess(process);
            }
            if (!sendShutdown() || !Processes.awaitExit(process, STOP_TIMEOUT)) {
                killProcess(process);
            }
        }
        paused = false;
        generation++;
    }

    /** Sends SHUTDOWN NOSAVE; returns whether the server accepted it (closed the connection). */
    private boolean sendShutdown() {
        try (RespClient client = RespClient.connect(host, port, STOP_TIMEOUT)) {
            if (password != null) {
                client.command("AUTH", password);
            }
            client.send("SHUTDOWN", "NOSAVE");
            try {
                client.readReply();
                return false;
            } catch (UncheckedIOException closedByServer) {
                return true;
            }
        } catch (UncheckedIOException | RespErrorException ex) {
            return false;
        }
    }

    /**
     * Kills the process with {@code SIGKILL} and waits for it to exit, like a crash or power loss
     * (data not yet written to disk is lost).
     *
     * @throws TestAbortedException if the server is not managed
     */
    public void kill() {
        Slot slot = requireSlot("kill()");
        synchronized (lifecycle) {
            ensureOpen();
            Process process = slot.process;
            if (process != null) {
                killProcess(process);
            }
            paused = false;
            generation++;
        }
    }

    private static void killProcess(Process process) {
        process.destroyForcibly();
        if (!Processes.awaitExit(process, STOP_TIMEOUT)) {
            throw new IllegalStateException(
                    "redis-server " + process.pid() + " did not exit after SIGKILL");
        }
    }

    /**
     * Freezes the process with {@code SIGSTOP}: connections stay open but nothing is answered until
     * {@link #resume()}, like a long GC pause or a stalled VM.
     *
     * <p>Returns once the operating system reports the process as stopped.
     *
     * @throws TestAbortedException if the server is not managed
     * @throws IllegalStateException if the process is not running
     */
    public void pause() {
        Slot slot = requireSlot("pause()");
        synchronized (lifecycle) {
            ensureOpen();
            Process process = slot.requireProcess();
            if (!process.isAlive()) {
                throw new IllegalStateException("Cannot pause " + this + ": it is not running");
            }
            Processes.signal(process.pid(), "STOP");
            Processes.awaitStopped(process.pid(), true, SIGNAL_TIMEOUT);
            paused = true;
        }
    }

    /**
     * Continues a paused process with {@code SIGCONT}; requests sent meanwhile are then answered.
     *
     * @throws TestAbortedException if the server is not managed
     * @throws IllegalStateException if the process is not running
     */
    public void resume() {
        Slot slot = requireSlot("resume()");
        synchronized (lifecycle) {
            ensureOpen();
            Process process = slot.requireProcess();
            if (!process.isAlive()) {
                throw new IllegalStateException("Cannot resume " + this + ": it is not running");
            }
            continueProcess(process);
        }
    }

    private void continueProcess(Process process) {
        Processes.signal(process.pid(), "CONT");
        Processes.awaitStopped(process.pid(), false, SIGNAL_TIMEOUT);
        paused = false;
    }

    /**
     * Starts a new process on the same port and in the same directory with the same options, and
     * waits until it answers; with {@code appendOnly} it reloads the data from its AOF.
     *
     * <p>A process that is still running is stopped gracefully first. While the port is still held
     * (for example by a dying process), it retries for up to 15 seconds.
     *
     * @throws TestAbortedException if the server is not managed
     */
    public void restart() {
        Slot slot = requireSlot("restart()");
        synchronized (lifecycle) {
            ensureOpen();
            stopProcess(slot);
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            while (true) {
                try {
                    launch(Objects.requireNonNull(binary), slot, port, options, deadline);
                    break;
                } catch (PortInUseException ex) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException(
                                "Could not restart redis-server: port "
                                        + port
                                        + " is still in use after "
                                        + START_TIMEOUT.toSeconds()
                                        + " s",
                                ex);
                    }
                    Processes.pause(Duration.ofMillis(50));
                }
            }
            paused = false;
            generation++;
        }
    }

    /**
     * Opens a new connection with the default read timeout of 5 seconds, authenticated if the
     * server has a password.
     *
     * @return a new client; close it when done
     */
    public RespClient client() {
        return client(RespClient.DEFAULT_READ_TIMEOUT);
    }

    /**
     * Opens a new connection with the given read timeout, authenticated if the server has a
     * password and switched to the URL's database if one was given.
     *
     * @param readTimeout the longest wait for the connection and each reply
     * @return a new client; close it when done
     */
    public RespClient client(Duration readTimeout) {
        RespClient client = RespClient.connect(host, port, readTimeout);
        try {
            if (password != null) {
                if (username != null) {
                    client.command("AUTH", username, password);
                } else {
                    client.command("AUTH", password);
                }
            }
            if (database != 0) {
                client.command("SELECT", Integer.toString(database));
            }
            return client;
        } catch (RuntimeException ex) {
            client.close();
            throw ex;
        }
    }

    /**
     * Sends one command on a cached connection, reconnecting after a restart or an I/O failure.
     *
     * @param args the command name and its arguments
     * @return the reply, as described in {@link RespClient}
     * @throws RespErrorException if Redis answers with an error
     * @throws UncheckedIOException on an I/O failure or read timeout
     */
    public @Nullable Object command(String... args) {
        connectionLock.lock();
        try {
            RespClient client = connection;
            if (client == null || !client.isOpen() || connectionGeneration != generation) {
                if (client != null) {
                    client.close();
                }
                connection = null;
                ensureOpen();
                int current = generation;
                client = client();
                connection = client;
                connectionGeneration = current;
            }
            return client.command(args);
        } finally {
            connectionLock.unlock();
        }
    }

    /** Deletes every key in every database with {@code FLUSHALL}. */
    public void flushAll() {
        command("FLUSHALL");
    }

    /**
     * Removes every cached Lua script with {@code SCRIPT FLUSH}, so the next EVALSHA gets NOSCRIPT.
     */
    public void scriptFlush() {
        command("SCRIPT", "FLUSH");
    }

    /**
     * Suspends all clients for the given time with {@code CLIENT PAUSE <ms> ALL}; this connection
     * is suspended too, and so is {@code CLIENT UNPAUSE}, so the pause cannot be ended early.
     *
     * @param duration how long to pause, rounded down to milliseconds
     */
    public void clientPause(Duration duration) {
        requireNotNegative(duration, "duration");
        command("CLIENT", "PAUSE", Long.toString(duration.toMillis()), "ALL");
    }

    /**
     * Blocks the whole server for the given time with {@code DEBUG SLEEP}, sent on its own
     * connection without waiting for the reply.
     *
     * <p>Returns as soon as the command is written; the server blocks once it reads it. A
     * background daemon thread reads the reply and closes the connection.
     *
     * @param duration how long the server should sleep
     */
    public void debugSleep(Duration duration) {
        requireNotNegative(duration, "duration");
        String seconds =
                BigDecimal.valueOf(duration.toNanos() / 1000, 6)
                        .stripTrailingZeros()
                        .toPlainString();
        RespClient client = client(duration.plus(Duration.ofSeconds(10)));
        try {
            client.send("DEBUG", "SLEEP", seconds);
        } catch (RuntimeException ex) {
            client.close();
            throw ex;
        }
        Thread reader =
                new Thread(
                        () -> {
                            try (client) {
                                client.readReply();
                            } catch (RuntimeException ignored) {
                                // the reply does not matter
                            }
                        },
                        "redlease-debug-sleep-" + port);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Returns the raw text of {@code INFO <section>}.
     *
     * @param section the section, for example {@code server}, {@code persistence} or {@code
     *     clients}
     * @return the text as Redis sent it
     */
    public String info(String section) {
        Object reply = command("INFO", section);
        return reply == null ? "" : reply.toString();
    }

    /**
     * Ends the server: a managed process is resumed if paused, killed, and its directory deleted; a
     * container is stopped; an external server is left running. Calling it again does nothing.
     */
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                if (slot != null) {
                    Process process = slot.process;
                    if (process != null && process.isAlive()) {
                        if (paused) {
                            try {
                                Processes.signal(process.pid(), "CONT");
                            } catch (RuntimeException ignored) {
                                // SIGKILL ends a stopped process too
                            }
                        }
                        killProcess(process);
                    }
                    paused = false;
                    Processes.deleteRecursively(slot.dir);
                }
                if (container != null) {
                    container.stop();
                }
                if (registration != null) {
                    registration.cancel();
                }
            } finally {
                connectionLock.lock();
                try {
                    if (connection != null) {
                        connection.close();
                        connection = null;
                    }
                } finally {
                    connectionLock.unlock();
                }
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        String where = host + ":" + port;
        return switch (kind) {
            case MANAGED ->
                    "RedisServer[managed "
                            + where
                            + ", dir "
                            + Objects.requireNonNull(slot).dir
                            + "]";
            case CONTAINER ->
                    "RedisServer[container " + ContainerRedis.IMAGE + " at " + where + "]";
            case EXTERNAL -> "RedisServer[external " + where + "]";
        };
    }

    private Slot requireSlot(String lever) {
        if (slot == null) {
            String why =
                    kind == Kind.EXTERNAL
                            ? "it is an external server (" + URL_ENV + " is set)"
                            : "it runs in a Docker container (no redis-server on the PATH)";
            throw new TestAbortedException(
                    "RedisServer."
                            + lever
                            + " needs a redis-server started by the fixture, but "
                            + why);
        }
        return slot;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static void requireNotNegative(Duration duration, String name) {
        Objects.requireNonNull(duration, name + " must not be null");
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative but was " + duration);
        }
    }

    /** The process and directory of a managed server, also cleaned up by the shutdown hook. */
    private static final class Slot implements Runnable {

        final Path dir;
        volatile @Nullable Process process;

        Slot(Path dir) {
            this.dir = dir;
        }

        Process requireProcess() {
            Process current = process;
            if (current == null) {
                throw new IllegalStateException("No redis-server process was started in " + dir);
            }
            return current;
        }

        @Override
        public void run() {
            Process current = process;
            if (current != null && current.isAlive()) {
                current.destroyForcibly();
                Processes.awaitExit(current, Duration.ofSeconds(2));
            }
            try {
                Processes.deleteRecursively(dir);
            } catch (UncheckedIOException ignored) {
                // best effort
            }
        }
    }

    /** Thrown when redis-server could not bind its port. */
    private static final class PortInUseException extends Exception {

        private static final long serialVersionUID = 1L;

        PortInUseException(int port) {
            super("Port " + port + " is in use");
        }
    }

    /**
     * How to configure a server the fixture starts; immutable, each method returns a changed copy.
     *
     * <p>Example: {@code
     * RedisServer.start(Options.defaults().appendOnly(true).appendFsync("always"))}.
     */
    public static final class Options {

        private static final Options DEFAULTS = new Options(false, null, null, List.of(), 0);
        private static final List<String> FSYNC_POLICIES = List.of("always", "everysec", "no");

        final boolean appendOnly;
        final @Nullable String appendFsync;
        final @Nullable String requirePass;
        final List<String> extraArgs;
        final int port;

        private Options(
                boolean appendOnly,
                @Nullable String appendFsync,
                @Nullable String requirePass,
                List<String> extraArgs,
                int port) {
            this.appendOnly = appendOnly;
            this.appendFsync = appendFsync;
            this.requirePass = requirePass;
            this.extraArgs = extraArgs;
            this.port = port;
        }

        /**
         * Returns the defaults: no AOF, no RDB snapshots, no password, no extra arguments, a free
         * port.
         *
         * @return the default options
         */
        public static Options defaults() {
            return DEFAULTS;
        }

        /**
         * Returns a copy with the append-only file switched on or off ({@code --appendonly}).
         *
         * @param appendOnly whether to write an AOF that {@link RedisServer#restart()} reloads
         * @return the changed copy
         */
        public Options appendOnly(boolean appendOnly) {
            return new Options(appendOnly, appendFsync, requirePass, extraArgs, port);
        }

        /**
         * Returns a copy with the AOF fsync policy set ({@code --appendfsync}).
         *
         * @param policy {@code always}, {@code everysec} or {@code no}
         * @return the changed copy
         */
        public Options appendFsync(String policy) {
            Objects.requireNonNull(policy, "appendFsync must not be null");
            if (!FSYNC_POLICIES.contains(policy)) {
                throw new IllegalArgumentException(
                        "appendFsync must be one of " + FSYNC_POLICIES + " but was " + policy);
            }
            return new Options(appendOnly, policy, requirePass, extraArgs, port);
        }

        /**
         * Returns a copy with a password clients must send ({@code --requirepass}).
         *
         * @param password a non-empty password
         * @return the changed copy
         */
        public Options requirePass(String password) {
            Objects.requireNonNull(password, "requirePass must not be null");
            if (password.isEmpty()) {
                throw new IllegalArgumentException("requirePass must not be empty");
            }
            return new Options(appendOnly, appendFsync, password, extraArgs, port);
        }

        /**
         * Returns a copy with raw {@code redis-server} arguments added after the fixture's own, for
         * example {@code "--maxmemory-policy", "allkeys-lru"}.
         *
         * @param args arguments to add
         * @return the changed copy
         */
        public Options extraArgs(String... args) {
            List<String> all = new ArrayList<>(extraArgs);
            for (String arg : args) {
                all.add(Objects.requireNonNull(arg, "extraArgs must not contain null"));
            }
            return new Options(
                    appendOnly, appendFsync, requirePass, Collections.unmodifiableList(all), port);
        }

        /**
         * Returns a copy with a fixed port for a managed process.
         *
         * @param port a TCP port, or 0 for a free one
         * @return the changed copy
         */
        public Options port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(
                        "port must be between 0 and 65535 but was " + port);
            }
            return new Options(appendOnly, appendFsync, requirePass, extraArgs, port);
        }

        boolean isDefault() {
            return equals(DEFAULTS);
        }

        List<String> configArgs() {
            List<String> args = new ArrayList<>(List.of("--save", ""));
            args.addAll(List.of("--appendonly", appendOnly ? "yes" : "no"));
            if (appendFsync != null) {
                args.addAll(List.of("--appendfsync", appendFsync));
            }
            if (requirePass != null) {
                args.addAll(List.of("--requirepass", requirePass));
            }
            args.addAll(extraArgs);
            return args;
        }

        @Override
        public boolean equals(@Nullable Object other) {
            return other instanceof Options that
                    && appendOnly == that.appendOnly
                    && port == that.port
                    && Objects.equals(appendFsync, that.appendFsync)
                    && Objects.equals(requirePass, that.requirePass)
                    && extraArgs.equals(that.extraArgs);
        }

        @Override
        public int hashCode() {
            return Objects.hash(appendOnly, appendFsync, requirePass, extraArgs, port);
        }

        @Override
        public String toString() {
            return "Options[appendOnly="
                    + appendOnly
                    + ", appendFsync="
                    + appendFsync
                    + ", requirePass="
                    + (requirePass == null ? "none" : "***")
                    + ", extraArgs="
                    + Arrays.toString(extraArgs.toArray())
                    + ", port="
                    + port
                    + "]";
        }
    }
}
