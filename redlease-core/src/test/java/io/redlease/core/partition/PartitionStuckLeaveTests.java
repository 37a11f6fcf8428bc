package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A stop whose balancing thread is held up past the time to live (a round waiting on Redis) still
 * removes this instance's member entry before it returns, so the others count it out at their next
 * look rather than once the entry lapses.
 */
@ExtendWith(RedisExtension.class)
class PartitionStuckLeaveTests {

    private static final Duration TTL = Duration.ofSeconds(2);

    private final Connections connections = new Connections();

    private RedisServer server;

    private String name;

    private PartitionedElection instance;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Connections.unique(info);
    }

    @AfterEach
    void tearDown() {
        if (instance != null) {
            instance.close();
        }
        connections.close();
    }

    @Test
    void aStopWhoseRoundIsHeldUpPastTheTimeToLiveStillLeavesTheMemberSet() {
        instance =
                new PartitionedElection(
                        connections.to(server),
                        PartitionedElectionConfig.builder(name, 4)
                                .ttl(TTL)
                                .instanceId("a")
                                .build());
        instance.start();
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(() -> instance.members().contains("a"));

        // Redis holds every client for longer than the stop waits for the leave; the stop comes
        // once a round is waiting in its member refresh, so the leave queued behind it does not
        // run in time.
        server.clientPause(TTL.plusSeconds(3));
        instance.wake();
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(this::aRoundWaitsInItsMemberRefresh);
        instance.stop();

        // Gone once the stop has returned: the refresh the round sent came first, and the
        // entry it wrote would stay counted for a time to live after the pause.
        assertThat(server.command("ZSCORE", "{" + name + "}:members", "a")).isNull();
        // Its own view of the members no longer counts it either.
        assertThat(instance.members()).doesNotContain("a");

        // Started again, it joins again.
        instance.start();
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(() -> instance.members().contains("a"));
    }

    private boolean aRoundWaitsInItsMemberRefresh() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(entry -> entry.getKey().getName().startsWith("redlease-partitions-" + name))
                .flatMap(entry -> java.util.Arrays.stream(entry.getValue()))
                .anyMatch(
                        frame ->
                                frame.getClassName().equals(Membership.class.getName())
                                        && frame.getMethodName().equals("refresh"));
    }
}
