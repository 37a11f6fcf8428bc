package io.redlease.boot.app.switches;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.AppNodes;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A follower in a JVM of its own, without a web server and without {@code spring.main.keep-alive}:
 * its only work is leader-only, its main thread has returned, and it stays up until its context is
 * closed, then exits with code 0.
 */
@ExtendWith(RedisExtension.class)
class FollowerKeepAliveTests {

    private static final Duration WAIT = Duration.ofMinutes(2);

    @Test
    void aFollowerWithoutAWebServerStaysUpUntilItsContextIsClosed(
            RedisServer server, @TempDir Path directory) throws Exception {
        String name = "{follower-" + System.nanoTime() + "}";
        Path stop = directory.resolve("stop");
        LettuceConnectionFactory connections =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        connections.afterPropertiesSet();
        Elector holder =
                new Elector(
                        new StringRedisTemplate(connections),
                        ElectorConfig.builder(name).instanceId("holder").build());
        try (AppNodes nodes =
                new AppNodes(
                        KeepAliveNode.class,
                        id ->
                                List.of(
                                        "--spring.main.banner-mode=off",
                                        "--spring.data.redis.url=" + server.url(),
                                        "--redlease.name=" + name,
                                        "--redlease.instance-id=" + id,
                                        "--test.stop-file=" + stop,
                                        "--logging.level.root=WARN"),
                        Path.of("target", "follower-keep-alive-events.txt"))) {
            holder.start();
            await().atMost(WAIT).until(holder::isLeader);
            nodes.start("b");
            nodes.await(AppNodes.after(0, "ready"), WAIT);
            long following = nodes.await(AppNodes.after(0, "following"), WAIT).time();
            // Each tick shows the JVM alive after its main thread returned and its election settled
            // as a follower: without a keep-alive it exited within milliseconds of "following".
            await().atMost(WAIT)
                    .until(
                            () ->
                                    nodes.events().stream()
                                                    .filter(AppNodes.after(following, "tick"))
                                                    .count()
                                            >= 10);
            assertThat(nodes.isAlive("b")).isTrue();
            assertThat(holder.isLeader()).as("b stayed a follower").isTrue();

            Files.createFile(stop);
            assertThat(nodes.awaitExit("b", WAIT))
                    .as("exit code after the context closed")
                    .isZero();
            assertThat(nodes.events()).anyMatch(event -> event.kind().equals("closing"));
        } finally {
            holder.close();
            connections.destroy();
        }
    }
}
