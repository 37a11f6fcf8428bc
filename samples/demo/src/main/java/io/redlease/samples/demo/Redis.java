package io.redlease.samples.demo;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Just enough of a Redis client for the demo (PING, AUTH, GET, LRANGE, DEL over RESP), and finding
 * or starting a Redis.
 */
final class Redis implements AutoCloseable {

    final String url;

    final String description;

    private final Socket socket;

    private final InputStream in;

    private final OutputStream out;

    private Redis(Socket socket, String url, String description) throws IOException {
        this.socket = socket;
        this.url = url;
        this.description = description;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /**
     * Finds the Redis to use: {@code REDIS_URL}; else one on 127.0.0.1:6379 unless {@code fresh};
     * else a throwaway {@code redis-server} or Docker container, added to {@code helpers}.
     */
    static Redis find(boolean freshRedis, List<Process> helpers) throws Exception {
        String url = System.getenv("REDIS_URL");
        if (url != null && !url.isBlank()) {
            return connect(URI.create(url), "REDIS_URL " + url, false);
        }
        if (!freshRedis) {
            Optional<Redis> local =
                    tryConnect("127.0.0.1", 6379, "127.0.0.1:6379 (already running)");
            if (local.isPresent()) {
                return local.get();
            }
        }
        int port = freePort();
        if (onPath("redis-server")) {
            Path dir = Files.createTempDirectory("redlease-demo-redis");
            Process server =
                    new ProcessBuilder(
                                    "redis-server",
                                    "--port",
                                    Integer.toString(port),
                                    "--bind",
                                    "127.0.0.1",
                                    "--save",
                                    "",
                                    "--appendonly",
                                    "no",
                                    "--dir",
                                    dir.toString())
                            .redirectErrorStream(true)
                            .redirectOutput(dir.resolve("redis.log").toFile())
                            .start();
            helpers.add(server);
            return awaitRedis(port, "a throwaway redis-server on port " + port);
        }
        if (onPath("docker")) {
            Process run =
                    new ProcessBuilder(
                                    "docker",
                                    "run",
                                    "--rm",
                                    "-d",
                                    "--name",
                                    "redlease-demo-" + port,
                                    "-p",
                                    "127.0.0.1:" + port + ":6379",
                                    "redis:7")
                            .redirectErrorStream(true)
                            .start();
            if (run.waitFor() == 0) {
                Runtime.getRuntime()
                        .addShutdownHook(
                                new Thread(
                                        () ->
                                                Console.quietly(
                                                        "docker",
                                                        "rm",
                                                        "-f",
                                                        "redlease-demo-" + port)));
                return awaitRedis(port, "a throwaway redis:7 container on port " + port);
            }
        }
        throw new DemoFailure(
                "no Redis found: set REDIS_URL, start Redis on 127.0.0.1:6379, or install redis-server"
                        + " (Debian/Ubuntu: apt-get install redis-server) or Docker");
    }

    private static Redis awaitRedis(int port, String description) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            Optional<Redis> redis = tryConnect("127.0.0.1", port, description);
            if (redis.isPresent()) {
                return redis.get();
            }
            Thread.sleep(100);
        }
        throw new DemoFailure("Redis did not start on port " + port);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static boolean onPath(String command) {
        for (String dir :
                System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    static Optional<Redis> tryConnect(String host, int port, String description) {
        try {
            return Optional.of(
                    connect(URI.create("redis://" + host + ":" + port), description, true));
        } catch (IOException | RuntimeException ex) {
            return Optional.empty();
        }
    }

    static Redis connect(URI uri, String description, boolean quick) throws IOException {
        Socket socket = new Socket();
        socket.connect(
                new InetSocketAddress(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort()),
                quick ? 300 : 5000);
        socket.setSoTimeout(5000);
        Redis redis =
                new Redis(socket, uri.toString(), description.replaceAll("//[^@/]*@", "//***@"));
        String userInfo = uri.getUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            int colon = userInfo.indexOf(':');
            if (colon > 0) {
                redis.command("AUTH", userInfo.substring(0, colon), userInfo.substring(colon + 1));
            } else {
                redis.command("AUTH", colon == 0 ? userInfo.substring(1) : userInfo);
            }
        }
        Object pong = redis.command("PING");
        if (!"PONG".equals(pong)) {
            redis.close();
            throw new IOException("not a Redis server: " + pong);
        }
        return redis;
    }

    @SuppressWarnings("unchecked")
    List<String> lrange(String key) throws IOException {
        List<String> result = new ArrayList<>();
        for (Object item : (List<Object>) command("LRANGE", key, "0", "-1")) {
            result.add((String) item);
        }
        return result;
    }

    String get(String key) throws IOException {
        return (String) command("GET", key);
    }

    void delete(String... keys) throws IOException {
        String[] args = new String[keys.length + 1];
        args[0] = "DEL";
        System.arraycopy(keys, 0, args, 1, keys.length);
        command(args);
    }

    synchronized Object command(String... args) throws IOException {
        StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            request.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
        }
        out.write(request.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
        return read();
    }

    private Object read() throws IOException {
        int type = in.read();
        String line = line();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IOException("Redis error: " + line);
            case ':':
                return Long.parseLong(line);
            case '$':
                {
                    int length = Integer.parseInt(line);
                    if (length < 0) {
                        return null;
                    }
                    byte[] bytes = in.readNBytes(length + 2);
                    return new String(bytes, 0, length, StandardCharsets.UTF_8);
                }
            case '*':
                {
                    int count = Integer.parseInt(line);
                    List<Object> items = new ArrayList<>();
                    for (int i = 0; i < count; i++) {
                        items.add(read());
                    }
                    return items;
                }
            default:
                throw new IOException("unexpected reply type " + type);
        }
    }

    private String line() throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            line.append((char) c);
        }
        in.read();
        return line.toString();
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ex) {
            // Closing anyway.
        }
    }
}
