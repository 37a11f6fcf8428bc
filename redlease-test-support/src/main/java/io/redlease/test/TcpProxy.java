package io.redlease.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * An in-process loopback TCP proxy in front of one upstream {@code host:port} (usually a {@link
 * RedisServer}), whose forwarding mode can be switched at run time to simulate network faults.
 *
 * <p>Typically each candidate in a test connects through its own proxy, so one can be cut off while
 * the others keep working. A mode applies at once to every live connection and to every later one,
 * in both directions. Bytes travel in <em>chunks</em>: whatever one read from a socket returned,
 * which for small request/response traffic like Redis commands is one request or one reply. The
 * modes are:
 *
 * <ul>
 *   <li>{@link #pass()} (the initial mode): chunks are forwarded as soon as they are read.
 *   <li>{@link #blackhole()}: connections are accepted and kept open but nothing is delivered in
 *       either direction; chunks are held in order and delivered when the mode changes back to pass
 *       (or to delay, after the delay); a change to drop discards them. End of stream is held the
 *       same way.
 *   <li>{@link #drop()}: chunks are discarded instead of delivered, in both directions, including
 *       chunks held by an earlier blackhole. End of stream is still forwarded.
 *   <li>{@link #delay(Duration)}: each chunk is delivered no earlier than the delay after it was
 *       read, in order, in both directions (so a round trip takes at least twice the delay).
 * </ul>
 *
 * <p>Two one-off actions complete them: {@link #cut()} closes every current connection (new ones
 * are accepted afterwards and follow the current mode), and {@link #dropNextReply()} discards the
 * next chunk read from the upstream.
 *
 * <p>A mode change returns after any chunk already being written has been written (waiting at most
 * one second), so once {@link #blackhole()} or {@link #drop()} returns, no further byte is
 * delivered until the mode changes again; {@link #drop()} has discarded held chunks by then. Each
 * connection uses four daemon threads. The methods are thread-safe.
 */
public final class TcpProxy implements AutoCloseable {

    private enum Mode {
        PASS,
        BLACKHOLE,
        DROP,
        DELAY
    }

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration MODE_CHANGE_WAIT = Duration.ofSeconds(1);
    private static final int BUFFER_SIZE = 16 * 1024;

    /** Where new connections go: replaced whole by {@link #forwardTo(RedisServer)}. */
    private volatile InetSocketAddress upstream;

    private final ServerSocket listener;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final AtomicInteger linkIds = new AtomicInteger();
    private final AtomicInteger repliesToDrop = new AtomicInteger();

    /** Guards the fields below and is notified on every change that writers wait for. */
    private final Object monitor = new Object();

    private Mode mode = Mode.PASS;
    private Duration delay = Duration.ZERO;
    private int inFlight;
    private boolean closed;

    private TcpProxy(String upstreamHost, int upstreamPort, ServerSocket listener) {
        this.upstream = InetSocketAddress.createUnresolved(upstreamHost, upstreamPort);
        this.listener = listener;
    }

    /**
     * Starts a proxy on a free loopback port in front of {@code upstreamHost:upstreamPort}, in pass
     * mode.
     *
     * @param upstreamHost the host to forward to
     * @param upstreamPort the port to forward to
     * @return the running proxy; close it when done
     */
    public static TcpProxy start(String upstreamHost, int upstreamPort) {
        Objects.requireNonNull(upstreamHost, "upstreamHost must not be null");
        if (upstreamPort <= 0 || upstreamPort > 65535) {
            throw new IllegalArgumentException(
                    "upstreamPort must be between 1 and 65535 but was " + upstreamPort);
        }
        ServerSocket listener;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not open a loopback listener", ex);
        }
        TcpProxy proxy = new TcpProxy(upstreamHost, upstreamPort, listener);
        Thread acceptor =
                new Thread(proxy::acceptLoop, "redlease-tcpproxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
        return proxy;
    }

    /**
     * Starts a proxy in front of a Redis server, in pass mode; it keeps working across {@link
     * RedisServer#restart()} because the port stays the same.
     *
     * @param server the server to forward to
     * @return the running proxy; close it when done
     */
    public static TcpProxy start(RedisServer server) {
        return start(server.host(), server.port());
    }

    /**
     * Returns the loopback address clients connect to.
     *
     * @return the proxy's host address
     */
    public String host() {
        return listener.getInetAddress().getHostAddress();
    }

    /**
     * Returns the port clients connect to.
     *
     * @return the proxy's port
     */
    public int port() {
        return listener.getLocalPort();
    }

    /**
     * Returns how many proxied connections are open.
     *
     * @return the number of live connections
     */
    public int connectionCount() {
        return links.size();
    }

    /** Forwards chunks as soon as they are read, delivering any held by a blackhole first. */
    public void pass() {
        setMode(Mode.PASS, Duration.ZERO);
    }

    /**
     * Stops delivering in both directions while keeping connections open; chunks are held in order
     * until the mode changes.
     */
    public void blackhole() {
        setMode(Mode.BLACKHOLE, Duration.ZERO);
    }

    /** Discards chunks in both directions instead of delivering them, including held ones. */
    public void drop() {
        setMode(Mode.DROP, Duration.ZERO);
    }

    /**
     * Delivers each chunk no earlier than {@code delay} after it was read, preserving order.
     *
     * @param delay the one-way delay; zero behaves like {@link #pass()}
     */
    public void delay(Duration delay) {
        Objects.requireNonNull(delay, "delay must not be null");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative but was " + delay);
        }
        setMode(Mode.DELAY, delay);
    }

    /**
     * Returns how many chunks of data read from either side are held, not yet delivered: by a
     * blackhole, or waiting out a delay. A test that needs bytes to be held before it changes the
     * mode waits for this to be positive: a chunk still in the kernel's buffers is not held yet.
     */
    public int heldChunks() {
        synchronized (monitor) {
            int held = 0;
            for (Link link : links) {
                held += link.toUpstream.heldData() + link.toClient.heldData();
            }
            return held;
        }
    }

    /**
     * Closes every current connection on both sides, discarding held chunks; new connections are
     * still accepted and follow the current mode.
     */
    public void cut() {
        for (Link link : links) {
            link.close();
        }
    }

    /**
     * Sends every later connection to another server and {@link #cut() cuts} the current ones, as a
     * failover to a server with other data would: clients that reconnect reach the new one.
     *
     * @param server the server to forward to from now on
     */
    public void forwardTo(RedisServer server) {
        upstream = InetSocketAddress.createUnresolved(server.host(), server.port());
        cut();
    }

    /**
     * Discards the next chunk read from the upstream on any connection, such as the reply to the
     * next command; later chunks follow the mode. Each call discards one more chunk.
     */
    public void dropNextReply() {
        repliesToDrop.incrementAndGet();
    }

    /**
     * Stops accepting, closes every connection and stops the threads; calling it again does
     * nothing.
     */
    @Override
    public void close() {
        synchronized (monitor) {
            if (closed) {
                return;
            }
            closed = true;
            monitor.notifyAll();
        }
        closeQuietly(listener);
        cut();
    }

    @Override
    public String toString() {
        Mode current;
        Duration currentDelay;
        synchronized (monitor) {
            current = mode;
            currentDelay = delay;
        }
        return "TcpProxy["
                + host()
                + ":"
                + port()
                + " -> "
                + upstream.getHostString()
                + ":"
                + upstream.getPort()
                + ", "
                + (current == Mode.DELAY ? "delay " + currentDelay : current.name().toLowerCase())
                + "]";
    }

    private void setMode(Mode newMode, Duration newDelay) {
        synchronized (monitor) {
            mode = newMode;
            delay = newDelay;
            if (newMode == Mode.DROP) {
                for (Link link : links) {
                    link.toUpstream.discardHeld();
                    link.toClient.discardHeld();
                }
            }
            monitor.notifyAll();
            long deadline = System.nanoTime() + MODE_CHANGE_WAIT.toNanos();
            while (inFlight > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                waitOnMonitor(left);
            }
        }
    }

    private void acceptLoop() {
        while (true) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException ex) {
                return;
            }
            Socket upstream = new Socket();
            InetSocketAddress target = this.upstream;
            try {
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                upstream.connect(
                        new InetSocketAddress(target.getHostString(), target.getPort()),
                        (int) CONNECT_TIMEOUT.toMillis());
            } catch (IOException ex) {
                closeQuietly(upstream);
                closeQuietly(client);
                continue;
            }
            Link link = new Link(linkIds.incrementAndGet(), client, upstream);
            links.add(link);
            boolean isClosed;
            synchronized (monitor) {
                isClosed = closed;
            }
            if (isClosed) {
                link.close();
                return;
            }
            link.start();
        }
    }

    private void waitOnMonitor(long nanos) {
        try {
            TimeUnit.NANOSECONDS.timedWait(monitor, nanos);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }

    /** One proxied connection: a client socket, an upstream socket and a pipe each way. */
    private final class Link {

        private final int id;
        private final Socket client;
        private final Socket upstream;
        private final Pipe toUpstream;
        private final Pipe toClient;
        private volatile boolean closed;
        private int halfClosed;

        Link(int id, Socket client, Socket upstream) {
            this.id = id;
            this.client = client;
            this.upstream = upstream;
            this.toUpstream = new Pipe(this, client, upstream, false, "c2u");
            this.toClient = new Pipe(this, upstream, client, true, "u2c");
        }

        void start() {
            toUpstream.start();
            toClient.start();
        }

        boolean isClosed() {
            return closed;
        }

        /** Records that one direction delivered its end of stream; closes once both have. */
        void halfClosed() {
            boolean both;
            synchronized (monitor) {
                halfClosed++;
                both = halfClosed == 2;
            }
            if (both) {
                close();
            }
        }

        void close() {
            if (closed) {
                return;
            }
            closed = true;
            closeQuietly(client);
            closeQuietly(upstream);
            links.remove(this);
            synchronized (monitor) {
                monitor.notifyAll();
            }
        }

        String name(String direction, String role) {
            return "redlease-tcpproxy-" + port() + "-" + id + "-" + direction + "-" + role;
        }
    }

    /** A chunk read from one socket, or the end of its stream when {@code data} is null. */
    private record Chunk(byte @Nullable [] data, long readAtNanos) {}

    /** One direction of a link: a reader thread that queues chunks, a writer that delivers them. */
    private final class Pipe {

        private final Link link;
        private final Socket from;
        private final Socket to;
        private final boolean fromUpstream;
        private final String direction;

        /** Guarded by {@link TcpProxy#monitor}. */
        private final ArrayDeque<Chunk> queue = new ArrayDeque<>();

        Pipe(Link link, Socket from, Socket to, boolean fromUpstream, String direction) {
            this.link = link;
            this.from = from;
            this.to = to;
            this.fromUpstream = fromUpstream;
            this.direction = direction;
        }

        void start() {
            Thread reader = new Thread(this::readLoop, link.name(direction, "read"));
            Thread writer = new Thread(this::writeLoop, link.name(direction, "write"));
            reader.setDaemon(true);
            writer.setDaemon(true);
            reader.start();
            writer.start();
        }

        /** Counts queued data chunks; caller holds the monitor. */
        int heldData() {
            int held = 0;
            for (Chunk chunk : queue) {
                if (chunk.data() != null) {
                    held++;
                }
            }
            return held;
        }

        /** Discards queued data chunks, keeping an end of stream; caller holds the monitor. */
        void discardHeld() {
            queue.removeIf(chunk -> chunk.data() != null);
        }

        private void readLoop() {
            byte[] buffer = new byte[BUFFER_SIZE];
            try {
                InputStream in = from.getInputStream();
                while (true) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        enqueue(new Chunk(null, System.nanoTime()));
                        return;
                    }
                    if (n == 0) {
                        continue;
                    }
                    if (fromUpstream && takeReplyToDrop()) {
                        continue;
                    }
                    enqueue(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime()));
                }
            } catch (IOException ex) {
                link.close();
            }
        }

        private boolean takeReplyToDrop() {
            return repliesToDrop.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
        }

        private void enqueue(Chunk chunk) {
            synchronized (monitor) {
                queue.addLast(chunk);
                monitor.notifyAll();
            }
        }

        private void writeLoop() {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk chunk = next();
                    if (chunk == null) {
                        return;
                    }
                    try {
                        byte[] data = chunk.data();
                        if (data == null) {
                            to.shutdownOutput();
                            link.halfClosed();
                            return;
                        }
                        out.write(data);
                        out.flush();
                    } finally {
                        synchronized (monitor) {
                            inFlight--;
                            monitor.notifyAll();
                        }
                    }
                }
            } catch (IOException ex) {
                link.close();
            }
        }

        /** Waits for the next chunk to deliver under the current mode; null once closed. */
        private @Nullable Chunk next() {
            synchronized (monitor) {
                while (true) {
                    if (closed || link.isClosed()) {
                        return null;
                    }
                    Chunk chunk = queue.peekFirst();
                    if (chunk == null || mode == Mode.BLACKHOLE) {
                        waitOnMonitor(TimeUnit.SECONDS.toNanos(1));
                        continue;
                    }
                    if (mode == Mode.DROP && chunk.data() != null) {
                        queue.pollFirst();
                        continue;
                    }
                    if (mode == Mode.DELAY) {
                        long left = chunk.readAtNanos() + delay.toNanos() - System.nanoTime();
                        if (left > 0) {
                            waitOnMonitor(left);
                            continue;
                        }
                    }
                    queue.pollFirst();
                    inFlight++;
                    return chunk;
                }
            }
        }
    }
}
