package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One {@code redis-server} process (a data node or a Sentinel) started on a free loopback port with
 * arbitrary arguments, for topologies (Sentinel, Cluster) and server settings {@link RedisServer}
 * does not offer (TLS, a configuration file).
 *
 * <p>It has the same levers as a managed {@link RedisServer}: {@link #kill()} ({@code SIGKILL}),
 * {@link #pause()} and {@link #resume()} ({@code SIGSTOP}/{@code SIGCONT}), {@link #restart()} on
 * the same port and directory. Every process is ended by its pid in {@link #close()}, and by the
 * JVM shutdown hook if the run ends first. The methods are thread-safe.
 */
public final class RedisNode implements AutoCloseable {

    private static final String LOOPBACK = "127.0.0.1";
    private static final Duration START_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(15));
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration SIGNAL_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(5));

    private final Path binary;
    private final Path dir;
    private final int port;
    private final List<String> command;
    private final @Nullable String password;
    private final Processes.Registration registration;
    private volatile @Nullable Process process;
    private volatile boolean paused;
    private volatile boolean closed;

    private RedisNode(
            Path binary,
            Path dir,
            int port,
            List<String> command,
            @Nullable String password,
            Processes.Registration registration) {
        this.binary = binary;
        this.dir = dir;
        this.port = port;
        this.command = command;
        this.password = password;
        this.registration = registration;
    }

    /**
     * Starts a data node: {@code redis-server} on a free loopback port, in a fresh temporary
     * directory, without persistence, with {@code DEBUG} allowed from loopback and no delay before
     * a replica's full sync, followed by {@code extraArgs}; returns once it answers {@code PING}.
     *
     * @param extraArgs raw {@code redis-server} arguments, for example {@code "--replicaof",
     *     "127.0.0.1", "6380"}
     * @return the running node; close it when done
     */
    public static RedisNode start(String... extraArgs) {
        return start(null, List.of(extraArgs));
    }

    /**
     * Starts a data node like {@link #start(String...)} that requires {@code password} (the
     * arguments must set it, for example with {@code --requirepass}); the node's own probes and
     * {@link #command(String...)} authenticate with it.
     *
     * @param password the default user's password, or null
     * @param extraArgs raw {@code redis-server} arguments
     * @return the running node
     */
    public static RedisNode start(@Nullable String password, List<String> extraArgs) {
        Path dir = tempDir("redlease-node-");
        int port = freePort();
        List<String> command = new ArrayList<>();
        command.add(binary().toString());
        command.addAll(
                List.of(
                        "--bind",
                        LOOPBACK,
                        "--port",
                        Integer.toString(port),
                        "--dir",
                        dir.toString(),
                        "--logfile",
                        dir.resolve("redis.log").toString(),
                        "--daemonize",
                        "no",
                        "--protected-mode",
                        "no",
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--enable-debug-command",
                        "local",
                        // A replica's full sync starts at once instead of waiting 5 s for others.
                        "--repl-diskless-sync-delay",
                        "0"));
        command.addAll(extraArgs);
        return launch(dir, port, command, password);
    }

    /**
     * Starts a Sentinel with the given configuration lines (without {@code port}, {@code bind} and
     * {@code dir}, which this adds); the configuration file lives in the node's directory, where
     * Sentinel rewrites it.
     *
     * @param configLines lines such as {@code sentinel monitor m 127.0.0.1 6380 2}
     * @return the running Sentinel
     */
    public static RedisNode startSentinel(List<String> configLines) {
        Path dir = tempDir("redlease-sentinel-");
        int port = freePort();
        List<String> lines = new ArrayList<>();
        lines.add("port " + port);
        lines.add("bind " + LOOPBACK);
        lines.add("dir " + dir);
        lines.add("logfile " + dir.resolve("sentinel.log"));
        lines.add("protected-mode no");
        lines.addAll(configLines);
        Path config = dir.resolve("sentinel.conf");
        try {
            Files.writeString(config, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not write " + config, ex);
        }
        List<String> command = List.of(binary().toString(), config.toString(), "--sentinel");
        return launch(dir, port, command, null);
    }

    private static RedisNode launch(
            Path dir, int port, List<String> command, @Nullable String password) {
        Path binary = Path.of(command.get(0));
        Processes.Registration[] holder = new Processes.Registration[1];
        RedisNode[] node = new RedisNode[1];
        holder[0] =
                Processes.onJvmExit(
                        () -> {
                            RedisNode current = node[0];
                            if (current != null) {
                                current.destroyQuietly();
                            }
                        });
        node[0] = new RedisNode(binary, dir, port, List.copyOf(command), password, holder[0]);
        try {
            node[0].spawn();
            return node[0];
        } catch (RuntimeException ex) {
            node[0].close();
            throw ex;
        }
    }

    private void spawn() {
        ProcessBuilder builder =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(
                                ProcessBuilder.Redirect.appendTo(dir.resolve("out.log").toFile()));
        Process started;
        try {
            started = builder.start();
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not run " + binary, ex);
        }
        process = started;
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            if (!started.isAlive()) {
                throw new IllegalStateException(
                        "redis-server exited with code "
                                + started.exitValue()
                                + " on port "
                                + port
                                + "; log tail:\n"
                                + logTail());
            }
            if (answersPing()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "redis-server on port "
                                + port
                                + " did not answer PING within "
                                + START_TIMEOUT
                                + "; log tail:\n"
                                + logTail());
            }
            Processes.pause(Duration.ofMillis(5));
        }
    }

    private boolean answersPing() {
        try (RespClient client = RespClient.connect(LOOPBACK, port, PROBE_TIMEOUT)) {
            if (password != null) {
                client.command("AUTH", password);
            }
            return "PONG".equals(client.command("PING"));
        } catch (UncheckedIOException | RespErrorException ex) {
            return false;
        }
    }

    /** Returns the loopback address the node listens on, {@code 127.0.0.1}. */
    public String host() {
        return LOOPBACK;
    }

    /** Returns the plain (non-TLS) port; kept across {@link #restart()}. */
    public int port() {
        return port;
    }

    /** Returns {@code host:port}. */
    public String address() {
        return LOOPBACK + ":" + port;
    }

    /** Returns the node's working directory (logs, configuration, data). */
    public Path dir() {
        return dir;
    }

    /** Returns the pid of the current process. */
    public long pid() {
        return requireProcess().pid();
    }

    /** Returns whether the process is alive (a paused process counts as alive). */
    public boolean isAlive() {
        Process current = process;
        return current != null && current.isAlive();
    }

    /**
     * Sends one command on a new connection (authenticated if the node has a password) and returns
     * the reply as {@link RespClient} maps it.
     *
     * @param args the command and its arguments
     * @return the reply
     * @throws RespErrorException if the node answers with an error
     */
    public @Nullable Object command(String... args) {
        try (RespClient client = client(Duration.ofSeconds(5))) {
            return client.command(args);
        }
    }

    /**
     * Opens a new connection, authenticated if the node has a password.
     *
     * @param readTimeout the longest wait for each reply
     * @return the client; close it when done
     */
    public RespClient client(Duration readTimeout) {
        RespClient client = RespClient.connect(LOOPBACK, port, readTimeout);
        if (password != null) {
            try {
                client.command("AUTH", password);
            } catch (RuntimeException ex) {
                client.close();
                throw ex;
            }
        }
        return client;
    }

    /**
     * Returns one field of {@code INFO <section>}, or null when absent.
     *
     * @param section the INFO section
     * @param field the field name
     * @return the field's value
     */
    public @Nullable String info(String section, String field) {
        Object reply = command("INFO", section);
        return reply == null ? null : RedisServer.infoField(reply.toString(), field);
    }

    /** Kills the process with {@code SIGKILL} and waits for it to exit, like a crash. */
    public synchronized void kill() {
        Process current = process;
        if (current != null && current.isAlive()) {
            if (paused) {
                Processes.signal(current.pid(), "CONT");
            }
            Processes.signal(current.pid(), "KILL");
            if (!Processes.awaitExit(current, SIGNAL_TIMEOUT)) {
                throw new IllegalStateException("redis-server " + current.pid() + " survived KILL");
            }
        }
        paused = false;
    }

    /** Freezes the process with {@code SIGSTOP}; returns once it is reported stopped. */
    public synchronized void pause() {
        long pid = pid();
        Processes.signal(pid, "STOP");
        Processes.awaitStopped(pid, true, SIGNAL_TIMEOUT);
        paused = true;
    }

    /** Continues a paused process with {@code SIGCONT}. */
    public synchronized void resume() {
        long pid = pid();
        Processes.signal(pid, "CONT");
        Processes.awaitStopped(pid, false, SIGNAL_TIMEOUT);
        paused = false;
    }

    /**
     * Starts the process again on the same port, in the same directory, with the same command
     * (killing the current one first if it is alive).
     */
    public synchronized void restart() {
        kill();
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            try {
                spawn();
                return;
            } catch (IllegalStateException ex) {
                if (System.nanoTime() - deadline > 0 || !logTail().contains("in use")) {
                    throw ex;
                }
                Processes.pause(Duration.ofMillis(50));
            }
        }
    }

    /** Kills the process by its pid and deletes its directory; calling it again does nothing. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        destroyQuietly();
        registration.cancel();
    }

    private void destroyQuietly() {
        Process current = process;
        if (current != null && current.isAlive()) {
            try {
                if (paused) {
                    Processes.signal(current.pid(), "CONT");
                }
                Processes.signal(current.pid(), "KILL");
            } catch (RuntimeException ignored) {
                current.destroyForcibly();
            }
            Processes.awaitExit(current, SIGNAL_TIMEOUT);
        }
        try {
            Processes.deleteRecursively(dir);
        } catch (UncheckedIOException ignored) {
            // best effort
        }
    }

    @Override
    public String toString() {
        return "RedisNode[" + address() + ", dir " + dir + "]";
    }

    private Process requireProcess() {
        return Objects.requireNonNull(process, "no process was started");
    }

    private String logTail() {
        String out = Processes.tail(dir.resolve("out.log"), 20);
        String log = Processes.tail(dir.resolve("redis.log"), 20);
        String sentinel = Processes.tail(dir.resolve("sentinel.log"), 20);
        return (out + "\n" + log + "\n" + sentinel).strip();
    }

    static Path binary() {
        Path binary = RedisServer.findBinary();
        if (binary == null) {
            throw new MissingServerException(RedisServer.NO_REDIS_MESSAGE);
        }
        return binary;
    }

    static Path tempDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not create a temporary directory", ex);
        }
    }

    /**
     * Returns a loopback port that was free a moment ago, never one of the well-known ports of the
     * machine's own servers (6379, 5432, 3306, 5672, …).
     *
     * @return a port number
     */
    public static int freePort() {
        return Ports.freeLoopbackPort();
    }
}
