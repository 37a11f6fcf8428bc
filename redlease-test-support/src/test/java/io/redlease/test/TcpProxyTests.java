package io.redlease.test;

import static io.redlease.test.RedisServerTests.uniqueKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RedisExtension.class)
class TcpProxyTests {

    private static final Duration QUIET = Duration.ofMillis(200);

    @Test
    void passForwardsBothWays(RedisServer redis) {
        String key = uniqueKey();
        try (TcpProxy proxy = TcpProxy.start(redis);
                RespClient client = RespClient.connect(proxy.host(), proxy.port())) {
            assertThat(client.command("SET", key, "through the proxy")).isEqualTo("OK");
            assertThat(client.command("GET", key)).isEqualTo("through the proxy");
            assertThat(proxy.connectionCount()).isEqualTo(1);
            assertThat(proxy.toString()).contains("pass");
        }
    }

    @Test
    void forwardToCutsLiveConnectionsAndSendsNewOnesToTheOtherServer(
            RedisServer redis, @Dedicated RedisServer other) {
        String key = uniqueKey();
        other.command("SET", key, "other");
        try (TcpProxy proxy = TcpProxy.start(redis)) {
            RespClient before = RespClient.connect(proxy.host(), proxy.port());
            assertThat(before.command("GET", key)).isNull();
            proxy.forwardTo(other);
            assertThatThrownBy(() -> before.command("GET", key))
                    .isInstanceOf(UncheckedIOException.class);
            before.close();
            try (RespClient after = RespClient.connect(proxy.host(), proxy.port())) {
                assertThat(after.command("GET", key)).isEqualTo("other");
            }
            assertThat(proxy.toString()).contains(":" + other.port() + ",");
        }
    }

    @Test
    void blackholeHoldsRequestsOfLiveAndNewConnectionsUntilPass(RedisServer redis)
            throws IOException {
        try (TcpProxy proxy = TcpProxy.start(redis);
                Socket live = connect(proxy)) {
            write(live, "PING\r\n");
            assertThat(read(live, 7)).isEqualTo("+PONG\r\n");
            proxy.blackhole();
            write(live, "PING\r\n");
            try (Socket fresh = connect(proxy)) {
                write(fresh, "ECHO fresh\r\n");
                assertNothingArrives(live);
                assertNothingArrives(fresh);
                proxy.pass();
                assertThat(read(live, 7)).isEqualTo("+PONG\r\n");
                assertThat(read(fresh, 11)).isEqualTo("$5\r\nfresh\r\n");
            }
        }
    }

    @Test
    void blackholeHoldsRepliesUntilPass(@Dedicated RedisServer redis) throws IOException {
        String key = uniqueKey();
        try (TcpProxy proxy = TcpProxy.start(redis);
                Socket socket = connect(proxy)) {
            blockOnPop(redis, socket, key);
            proxy.blackhole();
            redis.command("RPUSH", key, "x");
            assertThat(redis.command("LLEN", key)).isEqualTo(0L);
            assertNothingArrives(socket);
            proxy.pass();
            String reply = "*2\r\n$" + key.length() + "\r\n" + key + "\r\n$1\r\nx\r\n";
            assertThat(read(socket, reply.length())).isEqualTo(reply);
        }
    }

    @Test
    void dropDiscardsBytesInBothDirections(@Dedicated RedisServer redis) throws IOException {
        String key = uniqueKey();
        try (TcpProxy proxy = TcpProxy.start(redis);
                Socket socket = connect(proxy)) {
            blockOnPop(redis, socket, key);
            proxy.drop();
            write(socket, "PING\r\n");
            redis.command("RPUSH", key, "x");
            assertThat(redis.command("LLEN", key)).isEqualTo(0L);
            assertNothingArrives(socket);
            proxy.pass();
            write(socket, "ECHO after\r\n");
            assertThat(read(socket, 11)).isEqualTo("$5\r\nafter\r\n");
        }
    }

    @Test
    void dropDiscardsBytesHeldByABlackhole(RedisServer redis) throws IOException {
        try (TcpProxy proxy = TcpProxy.start(redis);
                Socket socket = connect(proxy)) {
            proxy.blackhole();
            write(socket, "PING\r\n");
            assertNothingArrives(socket);
            // Under load the proxy may not have read the bytes yet; drop() discards only held ones.
            await().atMost(Duration.ofSeconds(10)).until(() -> proxy.heldChunks() > 0);
            proxy.drop();
            proxy.pass();
            write(socket, "ECHO after\r\n");
            assertThat(read(socket, 11)).isEqualTo("$5\r\nafter\r\n");
        }
    }

    @Test
    void dropNextReplyDiscardsExactlyOneReply(RedisServer redis) throws IOException {
        try (TcpProxy proxy = TcpProxy.start(redis);
                Socket socket = connect(proxy)) {
            proxy.dropNextReply();
            write(socket, "PING\r\n");
            assertNothingArrives(socket);
            write(socket, "ECHO next\r\n");
            assertThat(read(socket, 10)).isEqualTo("$4\r\nnext\r\n");
        }
    }

    @Test
    void delayDelaysEachDirectionAndKeepsOrder(RedisServer redis) {
        Duration delay = Duration.ofMillis(150);
        try (TcpProxy proxy = TcpProxy.start(redis);
                RespClient client = RespClient.connect(proxy.host(), proxy.port())) {
            proxy.delay(delay);
            long start = System.nanoTime();
            client.send("ECHO", "one");
            client.send("ECHO", "two");
            assertThat(client.readReply()).isEqualTo("one");
            assertThat(client.readReply()).isEqualTo("two");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isGreaterThanOrEqualTo(delay.multipliedBy(2));
            proxy.pass();
            assertThat(client.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void cutClosesCurrentConnectionsAndAcceptsNewOnes(RedisServer redis) {
        try (TcpProxy proxy = TcpProxy.start(redis)) {
            try (RespClient cutOff = RespClient.connect(proxy.host(), proxy.port())) {
                assertThat(cutOff.command("PING")).isEqualTo("PONG");
                proxy.cut();
                assertThatThrownBy(() -> cutOff.command("PING"))
                        .isInstanceOf(UncheckedIOException.class);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> proxy.connectionCount() == 0);
            await().atMost(Duration.ofSeconds(5)).until(() -> threadsOf(proxy).size() == 1);
            try (RespClient fresh = RespClient.connect(proxy.host(), proxy.port())) {
                assertThat(fresh.command("PING")).isEqualTo("PONG");
            }
        }
    }

    @Test
    void connectionToADownUpstreamIsClosed() {
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", RedisServerTests.CLOSED_PORT);
                RespClient client = RespClient.connect(proxy.host(), proxy.port())) {
            assertThatThrownBy(() -> client.command("PING"))
                    .isInstanceOf(UncheckedIOException.class);
        }
    }

    @Test
    void proxyKeepsWorkingAcrossARestart(@Dedicated RedisServer redis) {
        RedisServerTests.assumeManaged(redis);
        try (TcpProxy proxy = TcpProxy.start(redis)) {
            redis.restart();
            try (RespClient client = RespClient.connect(proxy.host(), proxy.port())) {
                assertThat(client.command("PING")).isEqualTo("PONG");
            }
        }
    }

    @Test
    void closeClosesConnectionsAndEndsEveryThread(RedisServer redis) {
        TcpProxy proxy = TcpProxy.start(redis);
        try (RespClient client = RespClient.connect(proxy.host(), proxy.port())) {
            assertThat(client.command("PING")).isEqualTo("PONG");
            assertThat(threadsOf(proxy)).hasSize(5);
            proxy.close();
            proxy.close();
            assertThatThrownBy(() -> client.command("PING"))
                    .isInstanceOf(UncheckedIOException.class);
        }
        assertThat(proxy.connectionCount()).isZero();
        await().atMost(Duration.ofSeconds(5)).until(() -> threadsOf(proxy).isEmpty());
    }

    private static List<Thread> threadsOf(TcpProxy proxy) {
        String prefix = "redlease-tcpproxy-" + proxy.port();
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(prefix) && thread.isAlive())
                .toList();
    }

    @Test
    void argumentsAreChecked(RedisServer redis) {
        assertThatThrownBy(() -> TcpProxy.start("127.0.0.1", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("upstreamPort");
        try (TcpProxy proxy = TcpProxy.start(redis)) {
            assertThatThrownBy(() -> proxy.delay(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("delay must not be negative");
        }
    }

    /** Sends a BLPOP through the socket and waits until Redis reports the client blocked. */
    private static void blockOnPop(RedisServer redis, Socket socket, String key)
            throws IOException {
        write(socket, "BLPOP " + key + " 10\r\n");
        await().atMost(Duration.ofSeconds(5))
                .until(
                        () ->
                                "1"
                                        .equals(
                                                RedisServer.infoField(
                                                        redis.info("clients"), "blocked_clients")));
    }

    private static Socket connect(TcpProxy proxy) throws IOException {
        Socket socket = new Socket(proxy.host(), proxy.port());
        socket.setTcpNoDelay(true);
        return socket;
    }

    private static void write(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }

    private static String read(Socket socket, int length) throws IOException {
        socket.setSoTimeout(5000);
        byte[] bytes = socket.getInputStream().readNBytes(length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void assertNothingArrives(Socket socket) throws IOException {
        socket.setSoTimeout((int) QUIET.toMillis());
        assertThatThrownBy(() -> socket.getInputStream().read())
                .isInstanceOf(SocketTimeoutException.class);
    }
}
