package io.redlease.test;

import static io.redlease.test.RedisServerTests.uniqueKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RedisExtension.class)
class RespClientTests {

    private final RedisServer redis;

    RespClientTests(RedisServer redis) {
        this.redis = redis;
    }

    @Test
    void simpleStringReplyIsAString() {
        try (RespClient client = redis.client()) {
            assertThat(client.command("SET", uniqueKey(), "v")).isEqualTo("OK");
            assertThat(client.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void integerReplyIsALong() {
        String key = uniqueKey();
        try (RespClient client = redis.client()) {
            assertThat(client.command("INCR", key)).isEqualTo(1L);
            assertThat(client.command("DECRBY", key, "6")).isEqualTo(-5L);
            assertThat(client.command("INCRBY", key, "9000000000")).isEqualTo(8_999_999_995L);
        }
    }

    @Test
    void bulkStringReplyIsAUtf8StringAndBinarySafe() {
        String key = uniqueKey();
        try (RespClient client = redis.client()) {
            client.command("SET", key, "héllo wörld ✓");
            assertThat(client.command("GET", key)).isEqualTo("héllo wörld ✓");
            client.command("SET", key, "line one\r\nline two");
            assertThat(client.command("GET", key)).isEqualTo("line one\r\nline two");
            client.command("SET", key, "");
            assertThat(client.command("GET", key)).isEqualTo("");
        }
    }

    @Test
    void nilBulkStringAndNilArrayAreNull() {
        try (RespClient client = redis.client()) {
            assertThat(client.command("GET", uniqueKey())).isNull();
            assertThat(client.command("BLPOP", uniqueKey(), "0.01")).isNull();
        }
    }

    @Test
    void arrayReplyIsAList() {
        String key = uniqueKey();
        try (RespClient client = redis.client()) {
            client.command("RPUSH", key, "a", "b", "c");
            assertThat(client.command("LRANGE", key, "0", "-1")).isEqualTo(List.of("a", "b", "c"));
            assertThat(client.command("LRANGE", uniqueKey(), "0", "-1")).isEqualTo(List.of());
        }
    }

    @Test
    void nestedArraysKeepIntegersStringsAndNils() {
        try (RespClient client = redis.client()) {
            Object reply = client.command("EVAL", "return {1, 'two', {3, 'four'}, false}", "0");
            assertThat(reply).isEqualTo(Arrays.asList(1L, "two", List.of(3L, "four"), null));
            assertThat(reply).isInstanceOf(List.class);
            assertThatThrownBy(() -> ((List<?>) reply).clear())
                    .isInstanceOf(UnsupportedOperationException.class);
        }
    }

    @Test
    void errorReplyIsThrownAndTheConnectionStaysUsable() {
        String key = uniqueKey();
        try (RespClient client = redis.client()) {
            client.command("SET", key, "a string");
            assertThatThrownBy(() -> client.command("LPUSH", key, "x"))
                    .isInstanceOfSatisfying(
                            RespErrorException.class,
                            ex -> {
                                assertThat(ex.code()).isEqualTo("WRONGTYPE");
                                assertThat(ex.getMessage()).startsWith("WRONGTYPE Operation");
                            });
            assertThat(client.isOpen()).isTrue();
            assertThat(client.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void errorInsideAnArrayIsReturnedAsAnElement() {
        String key = uniqueKey();
        try (RespClient client = redis.client()) {
            assertThat(client.command("MULTI")).isEqualTo("OK");
            assertThat(client.command("SET", key, "a string")).isEqualTo("QUEUED");
            assertThat(client.command("LPUSH", key, "x")).isEqualTo("QUEUED");
            Object reply = client.command("EXEC");
            assertThat(reply)
                    .asInstanceOf(InstanceOfAssertFactories.LIST)
                    .hasSize(2)
                    .first()
                    .isEqualTo("OK");
            assertThat(((List<?>) reply).get(1))
                    .isInstanceOfSatisfying(
                            RespErrorException.class,
                            ex -> assertThat(ex.code()).isEqualTo("WRONGTYPE"));
        }
    }

    @Test
    void sendAndReadReplyPipelineCommands() {
        try (RespClient client = redis.client()) {
            client.send("PING");
            client.send("ECHO", "second");
            assertThat(client.readReply()).isEqualTo("PONG");
            assertThat(client.readReply()).isEqualTo("second");
        }
    }

    @Test
    void readTimeoutClosesTheClient() {
        try (BlackholeServer hole = BlackholeServer.start();
                RespClient client =
                        RespClient.connect(hole.host(), hole.port(), Duration.ofMillis(200))) {
            assertThatThrownBy(() -> client.command("PING"))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasCauseInstanceOf(SocketTimeoutException.class);
            assertThat(client.isOpen()).isFalse();
            assertThatThrownBy(() -> client.command("PING"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }

    @Test
    void readTimeoutCanBeChanged() {
        try (BlackholeServer hole = BlackholeServer.start();
                RespClient client = RespClient.connect(hole.host(), hole.port())) {
            client.readTimeout(Duration.ofMillis(100));
            assertThatThrownBy(() -> client.command("PING"))
                    .hasCauseInstanceOf(SocketTimeoutException.class);
        }
    }

    @Test
    void connectionRefusedNamesTheAddress() {
        int port = RedisServerTests.CLOSED_PORT;
        assertThatThrownBy(() -> RespClient.connect("127.0.0.1", port))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("127.0.0.1:" + port);
    }

    @Test
    void argumentsAreChecked() {
        assertThatThrownBy(() -> RespClient.connect("127.0.0.1", 1, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("readTimeout must be positive but was PT0S");
        try (RespClient client = redis.client()) {
            assertThatThrownBy(client::command)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("command name");
        }
    }

    @Test
    void protocolErrorClosesTheClient() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread replier =
                    new Thread(
                            () -> {
                                try (Socket socket = server.accept()) {
                                    OutputStream out = socket.getOutputStream();
                                    out.write("?what\r\n".getBytes(StandardCharsets.US_ASCII));
                                    out.flush();
                                    socket.getInputStream().read();
                                } catch (IOException ignored) {
                                    // the client hung up
                                }
                            });
            replier.setDaemon(true);
            replier.start();
            try (RespClient client = RespClient.connect("127.0.0.1", server.getLocalPort())) {
                assertThatThrownBy(() -> client.command("PING"))
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("Protocol error");
                assertThat(client.isOpen()).isFalse();
            }
        }
    }
}
