package io.redlease.samples.demo;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Just enough of a Redis client for the demo: PING, AUTH, LRANGE and DEL over RESP. */
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
