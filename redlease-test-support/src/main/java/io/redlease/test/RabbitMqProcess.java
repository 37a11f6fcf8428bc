package io.redlease.test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Starts a RabbitMQ broker of the fixture's own, isolated from any broker of the machine's.
 *
 * <ul>
 *   <li>Its own {@code epmd} on a free port ({@code ERL_EPMD_PORT}), so that the node registers
 *       neither with nor beside the machine's {@code epmd} on 4369, and nothing outlives the test
 *       run (an {@code epmd} that the Erlang VM starts itself would be a daemon).
 *   <li>Its own node name, distribution port, configuration, enabled plugins (management), data and
 *       log directories, all in a fresh temporary directory; {@code HOME} points there too, so the
 *       Erlang cookie is a new one there and {@code ~/.erlang.cookie} is neither read nor written.
 *   <li>The machine's {@code rabbitmq-env.conf} and any {@code RABBITMQ_*} or {@code ERL_*}
 *       variable of the test JVM are ignored.
 *   <li>The broker script {@code exec}s the Erlang VM ({@code RABBITMQ_ALLOW_INPUT}, with {@code
 *       -noinput}), so the process the fixture holds is the broker itself, which its watchdog and
 *       {@link Workspace#close()} can kill.
 * </ul>
 *
 * <p>Debian's {@code /usr/sbin/rabbitmq-server} is a wrapper that switches to the {@code rabbitmq}
 * user and refuses anyone else; the real script in {@code /usr/lib/rabbitmq/bin} is used instead.
 */
final class RabbitMqProcess {

    static final List<String> SERVER_DIRS =
            List.of(
                    "/usr/lib/rabbitmq/bin",
                    "/usr/lib/rabbitmq/lib/rabbitmq_server-*/sbin",
                    "/opt/homebrew/sbin",
                    "/usr/local/sbin",
                    "/opt/homebrew/opt/rabbitmq/sbin",
                    "/usr/local/opt/rabbitmq/sbin");
    static final List<String> EPMD_DIRS =
            List.of(
                    "/usr/bin",
                    "/usr/local/bin",
                    "/opt/homebrew/bin",
                    "/usr/lib/erlang/erts-*/bin",
                    "/usr/lib64/erlang/erts-*/bin",
                    "/usr/local/lib/erlang/erts-*/bin",
                    "/opt/homebrew/lib/erlang/erts-*/bin");

    private static final Duration EPMD_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(15));
    private static final Duration START_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(120));
    private static final int FREE_PORT_ATTEMPTS = 5;
    private static final int PROBE_TIMEOUT_MILLIS = 1_000;

    private RabbitMqProcess() {}

    /** Returns the broker script, skipping wrappers that switch users, or {@code null}. */
    static @Nullable Path findServer(Binaries binaries) {
        return binaries.find("rabbitmq-server", SERVER_DIRS, RabbitMqProcess::isNotUserWrapper);
    }

    /** Returns {@code epmd}, or {@code null}. */
    static @Nullable Path findEpmd(Binaries binaries) {
        return binaries.find("epmd", EPMD_DIRS);
    }

    /** Returns whether the script is not Debian's wrapper, which runs the broker as rabbitmq. */
    static boolean isNotUserWrapper(Path script) {
        try (InputStream in = Files.newInputStream(script)) {
            String head = new String(in.readNBytes(8192), StandardCharsets.UTF_8);
            return !head.contains("su rabbitmq");
        } catch (IOException ex) {
            return true;
        }
    }

    static RabbitMqServer start(@Nullable Path script, @Nullable Path epmd) {
        if (script == null || epmd == null) {
            throw new IllegalStateException("no RabbitMQ binaries");
        }
        Workspace workspace = Workspace.create("redlease-rabbitmq");
        try {
            int epmdPort = startEpmd(workspace, epmd);
            for (int attempt = 1; ; attempt++) {
                Set<Integer> taken = new HashSet<>(Set.of(epmdPort));
                int amqp = distinctFreePort(taken);
                int http = distinctFreePort(taken);
                int dist = distinctFreePort(taken);
                URI managementUrl = URI.create("http://" + RabbitMqServer.LOOPBACK + ":" + http);
                RabbitMqManagement management =
                        new RabbitMqManagement(
                                managementUrl, RabbitMqServer.USER, RabbitMqServer.USER);
                Path dir = workspace.dir();
                String node = "redlease-" + amqp + "@localhost";
                writeConfig(dir, amqp, http);
                Path log = dir.resolve("rabbitmq-server-" + attempt + ".log");
                ManagedProcess process =
                        workspace.start(
                                "rabbitmq-server",
                                List.of(script.toString()),
                                environment(dir, node, amqp, dist, epmdPort),
                                log,
                                "KILL");
                try {
                    workspace.awaitReady(
                            process,
                            log,
                            START_TIMEOUT,
                            () ->
                                    RabbitMqManagement.answersAmqp(RabbitMqServer.LOOPBACK, amqp)
                                            && management.isUp(),
                            tail ->
                                    tail.contains("eaddrinuse")
                                            || tail.contains("Address already in use"));
                    return new RabbitMqServer(
                            ServerKind.MANAGED,
                            RabbitMqServer.LOOPBACK,
                            amqp,
                            RabbitMqServer.USER,
                            RabbitMqServer.USER,
                            "/",
                            managementUrl,
                            workspace,
                            process,
                            null);
                } catch (Workspace.PortInUseException ex) {
                    if (attempt >= FREE_PORT_ATTEMPTS) {
                        throw new IllegalStateException(
                                "Could not start rabbitmq-server: its ports were taken "
                                        + attempt
                                        + " times",
                                ex);
                    }
                }
            }
        } catch (IOException ex) {
            workspace.close();
            throw new IllegalStateException("Could not prepare RabbitMQ in " + workspace.dir(), ex);
        } catch (RuntimeException | Error ex) {
            workspace.close();
            throw ex;
        }
    }

    /** Starts {@code epmd} in the foreground on a free loopback port and returns the port. */
    private static int startEpmd(Workspace workspace, Path epmd) {
        for (int attempt = 1; ; attempt++) {
            int port = Ports.freeLoopbackPort();
            Path log = workspace.dir().resolve("epmd-" + attempt + ".log");
            ManagedProcess process =
                    workspace.start(
                            "epmd",
                            List.of(
                                    epmd.toString(),
                                    "-port",
                                    Integer.toString(port),
                                    "-address",
                                    RabbitMqServer.LOOPBACK),
                            RabbitMqProcess::clean,
                            log,
                            "KILL");
            try {
                workspace.awaitReady(
                        process,
                        log,
                        EPMD_TIMEOUT,
                        () -> accepts(port),
                        tail -> tail.contains("in use") || tail.contains("eaddrinuse"));
                return port;
            } catch (Workspace.PortInUseException ex) {
                if (attempt >= FREE_PORT_ATTEMPTS) {
                    throw new IllegalStateException(
                            "Could not start epmd: port " + port + " is in use", ex);
                }
            }
        }
    }

    private static void writeConfig(Path dir, int amqp, int http) throws IOException {
        Files.writeString(dir.resolve("rabbitmq-env.conf"), "");
        Files.writeString(dir.resolve("enabled_plugins"), "[rabbitmq_management].\n");
        Files.writeString(
                dir.resolve("rabbitmq.conf"),
                String.join(
                        "\n",
                        "listeners.tcp.1 = " + RabbitMqServer.LOOPBACK + ":" + amqp,
                        "management.tcp.ip = " + RabbitMqServer.LOOPBACK,
                        "management.tcp.port = " + http,
                        "loopback_users.guest = true",
                        "log.console = true",
                        "log.console.level = warning",
                        "log.file.level = info",
                        ""));
    }

    private static Consumer<Map<String, String>> environment(
            Path dir, String node, int amqp, int dist, int epmdPort) {
        return env -> {
            clean(env);
            env.put("HOME", dir.toString());
            env.put("RABBITMQ_CONF_ENV_FILE", dir.resolve("rabbitmq-env.conf").toString());
            env.put("RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq.conf").toString());
            env.put("RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString());
            env.put("RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString());
            env.put("RABBITMQ_LOG_BASE", dir.resolve("log").toString());
            env.put("RABBITMQ_PID_FILE", dir.resolve("rabbitmq.pid").toString());
            env.put("RABBITMQ_NODENAME", node);
            env.put("RABBITMQ_NODE_IP_ADDRESS", RabbitMqServer.LOOPBACK);
            env.put("RABBITMQ_NODE_PORT", Integer.toString(amqp));
            env.put("RABBITMQ_DIST_PORT", Integer.toString(dist));
            env.put("ERL_EPMD_PORT", Integer.toString(epmdPort));
            env.put("ERL_EPMD_ADDRESS", RabbitMqServer.LOOPBACK);
            env.put("RABBITMQ_ALLOW_INPUT", "true");
            env.put(
                    "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
                    "-noinput -kernel inet_dist_use_interface {127,0,0,1}");
        };
    }

    /** Removes what the test JVM's environment could say to RabbitMQ or Erlang. */
    private static void clean(Map<String, String> env) {
        env.keySet()
                .removeIf(
                        name ->
                                name.startsWith("RABBITMQ_")
                                        || name.startsWith("ERL_")
                                        || name.equals("CONF_ENV_FILE")
                                        || name.equals("NOTIFY_SOCKET"));
    }

    private static int distinctFreePort(Set<Integer> taken) {
        while (true) {
            int port = Ports.freeLoopbackPort();
            if (taken.add(port)) {
                return port;
            }
        }
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(
                    new InetSocketAddress(RabbitMqServer.LOOPBACK, port), PROBE_TIMEOUT_MILLIS);
            return true;
        } catch (IOException ex) {
            return false;
        }
    }
}
