package io.redlease.test;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A small blocking RESP2 client over one TCP connection, for tests that need to talk to Redis
 * without a Redis library.
 *
 * <p>Replies map to Java values as follows: simple and bulk strings to {@link String} (UTF-8),
 * integers to {@link Long}, arrays to an unmodifiable {@code List<Object>}, nil bulk strings and
 * nil arrays to {@code null}. A top-level error reply is thrown as {@link RespErrorException}; an
 * error nested inside an array (for example in an {@code EXEC} result) is returned as a {@link
 * RespErrorException} element of the list.
 *
 * <p>Every read is bounded by the read timeout. Any I/O failure, including a read timeout, throws
 * {@link UncheckedIOException} and closes the client, because the connection can no longer be
 * trusted to be in step with the server. Not thread-safe: use one client per thread.
 */
public final class RespClient implements AutoCloseable {

    /** The read timeout used when none is given: 5 seconds. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(5);

    private final String host;
    private final int port;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private volatile boolean closed;

    private RespClient(String host, int port, Socket socket) throws IOException {
        this.host = host;
        this.port = port;
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream());
    }

    /**
     * Connects to Redis at {@code host:port} with the default read timeout of 5 seconds.
     *
     * @param host the host name or address
     * @param port the TCP port
     * @return a connected client
     * @throws UncheckedIOException if the connection cannot be made
     */
    public static RespClient connect(String host, int port) {
        return connect(host, port, DEFAULT_READ_TIMEOUT);
    }

    /**
     * Connects to Redis at {@code host:port}, bounding the connect and every read by {@code
     * readTimeout}.
     *
     * @param host the host name or address
     * @param port the TCP port
     * @param readTimeout the longest wait for a connection and for each reply; positive
     * @return a connected client
     * @throws UncheckedIOException if the connection cannot be made
     */
    public static RespClient connect(String host, int port, Duration readTimeout) {
        Objects.requireNonNull(host, "host must not be null");
        int timeoutMillis = toTimeoutMillis(readTimeout);
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            return new RespClient(host, port, socket);
        } catch (IOException ex) {
            closeQuietly(socket);
            throw new UncheckedIOException(
                    "Could not connect to Redis at " + host + ":" + port + ": " + ex.getMessage(),
                    ex);
        }
    }

    /**
     * Sends a command and waits for its reply.
     *
     * @param args the command name and its arguments, for example {@code "SET", "k", "v"}
     * @return the reply: a {@link String}, {@link Long}, {@code List<Object>} or {@code null}
     * @throws RespErrorException if Redis answers with an error reply
     * @throws UncheckedIOException on an I/O failure or read timeout (the client is then closed)
     */
    public @Nullable Object command(String... args) {
        send(args);
        return readReply();
    }

    /**
     * Sends a command without waiting for its reply; read it later with {@link #readReply()}.
     *
     * @param args the command name and its arguments
     * @throws UncheckedIOException on an I/O failure (the client is then closed)
     */
    public void send(String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("args must contain at least the command name");
        }
        ensureOpen();
        try {
            writeCommand(args);
            out.flush();
        } catch (IOException ex) {
            throw fail(ex);
        }
    }

    /**
     * Reads the next reply from the connection.
     *
     * @return the reply: a {@link String}, {@link Long}, {@code List<Object>} or {@code null}
     * @throws RespErrorException if the reply is an error reply
     * @throws UncheckedIOException on an I/O failure or read timeout (the client is then closed)
     */
    public @Nullable Object readReply() {
        ensureOpen();
        Object reply;
        try {
            reply = readValue();
        } catch (IOException ex) {
            throw fail(ex);
        }
        if (reply instanceof RespErrorException error) {
            throw new RespErrorException(error.getMessage());
        }
        return reply;
    }

    /**
     * Changes the read timeout for the following reads.
     *
     * @param readTimeout the longest wait for each reply; positive
     */
    public void readTimeout(Duration readTimeout) {
        int timeoutMillis = toTimeoutMillis(readTimeout);
        ensureOpen();
        try {
            socket.setSoTimeout(timeoutMillis);
        } catch (SocketException ex) {
            throw fail(ex);
        }
    }

    /**
     * Returns whether the client is still open.
     *
     * @return {@code false} once closed, including after an I/O failure
     */
    public boolean isOpen() {
        return !closed;
    }

    /** Closes the connection; calling it again has no effect. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(socket);
    }

    @Override
    public String toString() {
        return "RespClient[" + host + ":" + port + (closed ? ", closed]" : "]");
    }

    private void writeCommand(String[] args) throws IOException {
        writeHeader('*', args.length);
        for (String arg : args) {
            byte[] bytes =
                    Objects.requireNonNull(arg, "args must not contain null")
                            .getBytes(StandardCharsets.UTF_8);
            writeHeader('$', bytes.length);
            out.write(bytes);
            out.write('\r');
            out.write('\n');
        }
    }

    private void writeHeader(char type, int length) throws IOException {
        out.write(type);
        out.write(Integer.toString(length).getBytes(StandardCharsets.US_ASCII));
        out.write('\r');
        out.write('\n');
    }

    private @Nullable Object readValue() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("Connection closed by the server");
        }
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                return new RespErrorException(line);
            case ':':
                return parseLong(line);
            case '$':
                return readBulk(parseLength(line));
            case '*':
                return readArray(parseLength(line));
            default:
                throw new IOException(
                        "Protocol error: unexpected reply type '" + (char) type + "' " + line);
        }
    }

    private @Nullable String readBulk(int length) throws IOException {
        if (length < 0) {
            return null;
        }
        byte[] bytes = in.readNBytes(length);
        if (bytes.length < length) {
            throw new EOFException("Connection closed by the server inside a bulk string");
        }
        expectCrlf();
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private @Nullable List<@Nullable Object> readArray(int length) throws IOException {
        if (length < 0) {
            return null;
        }
        List<@Nullable Object> elements = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            elements.add(readValue());
        }
        return Collections.unmodifiableList(elements);
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("Connection closed by the server inside a reply");
            }
            if (b == '\r') {
                int next = in.read();
                if (next != '\n') {
                    throw new IOException("Protocol error: expected LF after CR");
                }
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    private void expectCrlf() throws IOException {
        if (in.read() != '\r' || in.read() != '\n') {
            throw new IOException("Protocol error: expected CRLF after a bulk string");
        }
    }

    private static long parseLong(String line) throws IOException {
        try {
            return Long.parseLong(line);
        } catch (NumberFormatException ex) {
            throw new IOException("Protocol error: not an integer: " + line, ex);
        }
    }

    private static int parseLength(String line) throws IOException {
        long length = parseLong(line);
        if (length > Integer.MAX_VALUE) {
            throw new IOException("Protocol error: length too large: " + line);
        }
        return (int) length;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private UncheckedIOException fail(IOException ex) {
        close();
        return new UncheckedIOException("Redis at " + host + ":" + port + " failed: " + ex, ex);
    }

    static int toTimeoutMillis(Duration timeout) {
        Objects.requireNonNull(timeout, "readTimeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("readTimeout must be positive but was " + timeout);
        }
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
