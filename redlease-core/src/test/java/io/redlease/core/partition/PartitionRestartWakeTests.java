package io.redlease.core.partition;

import static org.awaitility.Awaitility.await;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.RespClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A partitioned election with more than {@value BalancingThread#SPACED_PARTITIONS} partitions
 * spaces its woken rounds; one stopped while a spaced wake-up waits, and started again, still wakes
 * on a release. The clock is the test's own and the balance interval minutes long, so no regular
 * round runs: only wake-ups do.
 */
@ExtendWith(RedisExtension.class)
class PartitionRestartWakeTests {

    private static final Duration INTERVAL = Duration.ofMinutes(10);

    private final Connections connections = new Connections();

    private final AtomicLong clock = new AtomicLong();

    private PartitionedElection election;

    private StringRedisTemplate redis;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(@Dedicated RedisServer server, TestInfo info) {
        this.server = server;
        redis = connections.to(server);
        name = Connections.unique(info);
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder(name, BalancingThread.SPACED_PARTITIONS + 1)
                        .ttl(Duration.ofMinutes(30))
                        .renewInterval(INTERVAL)
                        .balanceInterval(INTERVAL)
                        .instanceId("a")
                        .build();
        election = new PartitionedElection(connections.to(server), config, clock::get);
    }

    @AfterEach
    void tearDown() {
        election.close();
        connections.close();
    }

    private void member(String id) {
        redis.opsForZSet()
                .add(
                        Membership.membersKey(name),
                        id,
                        System.currentTimeMillis() + Duration.ofHours(1).toMillis());
    }

    private boolean subscribed() {
        String channel = PartitionedElection.electionName(name, 0) + ":released";
        try (RespClient client = RespClient.connect(server.host(), server.port())) {
            List<?> reply = (List<?>) client.command("PUBSUB", "NUMSUB", channel);
            return reply != null && ((Number) reply.get(1)).longValue() > 0;
        }
    }

    @Test
    void aWakeUpPendingAtStopDoesNotSilenceTheWakeUpsOfTheNextRun() {
        election.start();
        await().atMost(Duration.ofSeconds(10)).until(this::subscribed);
        member("x");
        election.wake();
        await().atMost(Duration.ofSeconds(10)).until(() -> election.members().contains("x"));
        // A round that takes a second and a half: a wake-up right after it waits as long.
        List<String> before = election.members();
        redis.execute(
                (RedisCallback<Object>)
                        connection ->
                                connection.execute(
                                        "CLIENT",
                                        "PAUSE".getBytes(StandardCharsets.UTF_8),
                                        "1500".getBytes(StandardCharsets.UTF_8),
                                        "ALL".getBytes(StandardCharsets.UTF_8)));
        election.wake();
        await().atMost(Duration.ofSeconds(10)).until(() -> election.members() != before);
        election.wake(); // spaced: waits as long as that round took
        election.stop();

        election.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> election.members().contains("a"));
        member("y");
        election.wake();

        await().atMost(Duration.ofSeconds(5)).until(() -> election.members().contains("y"));
    }
}
