package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisNodeTests {

    @Test
    void startedNodeAnswersOnAFreeLoopbackPortWithoutPersistence() {
        try (RedisNode node = RedisNode.start()) {
            assertThat(node.command("PING")).isEqualTo("PONG");
            assertThat(node.host()).isEqualTo("127.0.0.1");
            assertThat(node.port()).isPositive().isNotEqualTo(6379);
            assertThat(node.address()).isEqualTo("127.0.0.1:" + node.port());
            assertThat(node.info("server", "process_id")).isEqualTo(Long.toString(node.pid()));
            assertThat(node.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
            assertThat(node.command("CONFIG", "GET", "repl-diskless-sync-delay"))
                    .isEqualTo(List.of("repl-diskless-sync-delay", "0"));
        }
    }

    @Test
    void extraArgumentsAndAPasswordAreApplied() {
        try (RedisNode node =
                RedisNode.start(
                        "s3cret", List.of("--requirepass", "s3cret", "--maxmemory", "7mb"))) {
            assertThat(node.command("CONFIG", "GET", "maxmemory"))
                    .isEqualTo(List.of("maxmemory", Long.toString(7 * 1024 * 1024)));
            try (RespClient anonymous = RespClient.connect(node.host(), node.port())) {
                assertThatThrownBy(() -> anonymous.command("GET", "k"))
                        .isInstanceOf(RespErrorException.class)
                        .hasMessageContaining("NOAUTH");
            }
        }
    }

    @Test
    void pauseFreezesTheProcessUntilResume() {
        try (RedisNode node = RedisNode.start()) {
            node.pause();
            try (RespClient probe =
                    RespClient.connect(node.host(), node.port(), Duration.ofMillis(200))) {
                assertThatThrownBy(() -> probe.command("PING"))
                        .isInstanceOf(UncheckedIOException.class);
            }
            node.resume();
            assertThat(node.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void killEndsTheProcessAndRestartComesBackOnTheSamePortAndDirectory() {
        try (RedisNode node = RedisNode.start()) {
            long pid = node.pid();
            int port = node.port();
            Path dir = node.dir();
            node.kill();
            assertThat(node.isAlive()).isFalse();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
                    .isNotEqualTo(java.util.Optional.of(true));
            node.restart();
            assertThat(node.isAlive()).isTrue();
            assertThat(node.pid()).isNotEqualTo(pid);
            assertThat(node.port()).isEqualTo(port);
            assertThat(node.dir()).isEqualTo(dir);
            assertThat(node.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void closeEndsTheProcessByItsPidAndDeletesTheDirectory() {
        RedisNode node = RedisNode.start();
        long pid = node.pid();
        Path dir = node.dir();
        node.close();
        await().atMost(Duration.ofSeconds(5))
                .until(() -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
        assertThat(dir).doesNotExist();
        node.close();
    }

    @Test
    void aReplicaFollowsItsPrimary() {
        try (RedisNode primary = RedisNode.start();
                RedisNode replica =
                        RedisNode.start(
                                "--replicaof", primary.host(), Integer.toString(primary.port()))) {
            primary.command("SET", "k", "v");
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> "v".equals(replica.command("GET", "k")));
            assertThat(replica.info("replication", "role")).isEqualTo("slave");
        }
    }

    @Test
    void aSentinelStartsFromItsConfigurationLines() {
        try (RedisNode primary = RedisNode.start();
                RedisNode sentinel =
                        RedisNode.startSentinel(
                                List.of(
                                        "sentinel monitor m "
                                                + primary.host()
                                                + " "
                                                + primary.port()
                                                + " 1"))) {
            assertThat(sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m"))
                    .isEqualTo(List.of("127.0.0.1", Integer.toString(primary.port())));
            assertThat(sentinel.dir().resolve("sentinel.conf")).exists();
        }
    }

    @Test
    void aNodeThatCannotStartFailsWithItsLog() {
        assertThatThrownBy(() -> RedisNode.start("--no-such-option", "x"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no-such-option");
    }
}
