package io.redlease.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP listener that accepts connections and never replies, like a Redis server that
 * hangs after the TCP handshake.
 *
 * <p>Bytes sent to it are read and discarded, so a client's writes never block. Use it to check
 * that calls stay bounded by their timeouts.
 */
public final class BlackholeServer implements AutoCloseable {

    private final ServerSocket listener;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile boolean closed;

    private BlackholeServer(ServerSocket listener) {
        this.listener = listener;
    }

    /**
     * Starts listening on a free loopback port.
     *
     * @return the running server; close it when done
     */
    public static BlackholeServer start() {
        ServerSocket listener;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not open a loopback listener", ex);
        }
        BlackholeServer server = new BlackholeServer(listener);
        Thread acceptor =
                new Thread(server::acceptLoop, "redlease-blackhole-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
        return server;
    }

    /**
     * Returns the loopback address to connect to.
     *
     * @return {@code 127.0.0.1} (or the platform's loopback address)
     */
    public String host() {
        return listener.getInetAddress().getHostAddress();
    }

    /**
     * Returns the port to connect to.
     *
     * @return the listening port
     */
    public int port() {
        return listener.getLocalPort();
    }

    /**
     * Returns how many connections have been accepted so far.
     *
     * @return the number of accepted connections, including closed ones
     */
    public int acceptedCount() {
        return accepted.get();
    }

    /** Closes the listener and every accepted connection; calling it again does nothing. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    @Override
    public String toString() {
        return "BlackholeServer[" + host() + ":" + port() + "]";
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException ex) {
                return;
            }
            sockets.add(socket);
            accepted.incrementAndGet();
            if (closed) {
                closeQuietly(socket);
                return;
            }
            Thread reader =
                    new Thread(
                            () -> discard(socket),
                            "redlease-blackhole-" + port() + "-conn-" + accepted.get());
            reader.setDaemon(true);
            reader.start();
        }
    }

    private void discard(Socket socket) {
        byte[] buffer = new byte[8192];
        try (InputStream in = socket.getInputStream()) {
            while (in.read(buffer) >= 0) {
                // discard
            }
        } catch (IOException ignored) {
            // connection closed
        } finally {
            sockets.remove(socket);
            closeQuietly(socket);
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
