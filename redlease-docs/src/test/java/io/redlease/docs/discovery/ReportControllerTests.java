package io.redlease.docs.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.web.client.RestClient;

/** The forwarding example of docs/operating.md: a follower forwards a request to the leader. */
@ExtendWith(RedisExtension.class)
class ReportControllerTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    @Test
    void aFollowerForwardsTheRequestAndTheLeaderServesIt(RedisServer server) throws IOException {
        String name = "{forwarding-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext leader = start(server, name, "leader")) {
            await().atMost(FIRST_ELECTION).until(leader.getBean(Elector.class)::isLeader);
            try (ConfigurableApplicationContext follower = start(server, name, "follower")) {
                String url = "http://127.0.0.1:" + port(follower) + "/reports";
                String reply =
                        RestClient.create()
                                .post()
                                .uri(url)
                                .body("r1")
                                .retrieve()
                                .body(String.class);
                assertThat(reply).isEqualTo("built by leader");
                StringRedisTemplate redis = leader.getBean(StringRedisTemplate.class);
                assertThat(redis.opsForHash().get(name + ":reports", "r1")).isEqualTo("leader");
            }
        }
    }

    private static ConfigurableApplicationContext start(
            RedisServer server, String name, String instanceId) throws IOException {
        return SpringApplication.run(
                ReportsApplication.class,
                "--server.address=127.0.0.1",
                "--server.port=" + freePort(),
                "--spring.data.redis.url=" + server.url(),
                "--redlease.name=" + name,
                "--redlease.instance-id=" + instanceId,
                "--redlease.discovery.enabled=true");
    }

    private static String port(ConfigurableApplicationContext app) {
        return app.getEnvironment().getProperty("local.server.port");
    }

    /**
     * A free loopback port, never one of the well-known ports a developer's own servers use:
     * discovery derives the advertised URL from a fixed server.port.
     */
    private static int freePort() throws IOException {
        while (true) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                int port = socket.getLocalPort();
                if (!Set.of(3306, 5432, 5672, 6379, 8080, 15672).contains(port)) {
                    return port;
                }
            }
        }
    }
}
