package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BlackholeServerTests {

    @Test
    void acceptsConnectionsAndNeverReplies() throws IOException {
        try (BlackholeServer hole = BlackholeServer.start();
                Socket socket = new Socket(hole.host(), hole.port())) {
            socket.setSoTimeout(200);
            socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            assertThatThrownBy(() -> socket.getInputStream().read())
                    .isInstanceOf(SocketTimeoutException.class);
            await().atMost(Duration.ofSeconds(5)).until(() -> hole.acceptedCount() == 1);
        }
    }

    @Test
    void aRedisCallAgainstItIsBoundedByTheReadTimeout() {
        try (BlackholeServer hole = BlackholeServer.start();
                RespClient client =
                        RespClient.connect(hole.host(), hole.port(), Duration.ofMillis(200))) {
            assertThatThrownBy(() -> client.command("PING"))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasCauseInstanceOf(SocketTimeoutException.class);
        }
    }

    @Test
    void closeClosesAcceptedConnectionsAndEndsEveryThread() throws IOException {
        BlackholeServer hole = BlackholeServer.start();
        try (Socket socket = new Socket(hole.host(), hole.port())) {
            await().atMost(Duration.ofSeconds(5)).until(() -> hole.acceptedCount() == 1);
            hole.close();
            hole.close();
            socket.setSoTimeout(5000);
            InputStream in = socket.getInputStream();
            try {
                assertThat(in.read()).isEqualTo(-1);
            } catch (SocketException reset) {
                // a reset shows the close as well as an end of stream does
            }
        }
        String prefix = "redlease-blackhole-" + hole.port();
        await().atMost(Duration.ofSeconds(5))
                .until(
                        () ->
                                Thread.getAllStackTraces().keySet().stream()
                                        .noneMatch(
                                                thread ->
                                                        thread.getName().startsWith(prefix)
                                                                && thread.isAlive()));
    }
}
