package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisSentinelSetupTests {

    /**
     * How long a failover may take: no correctness bound, only a guard against a hang (a loaded
     * machine runs Sentinel's and the cluster's timers late, and an aborted attempt is retried).
     */
    private static final Duration FAILOVER = Duration.ofSeconds(60);

    @Test
    void startsAPrimaryAReplicaInSyncAndThreeSentinelsThatFailOverAKilledPrimary() {
        try (RedisSentinelSetup setup = RedisSentinelSetup.start(Duration.ofMillis(500))) {
            RedisNode primary = setup.initialPrimary();
            RedisNode replica = setup.initialReplica();
            assertThat(setup.sentinels()).hasSize(3);
            assertThat(setup.currentPrimaryPort()).isEqualTo(primary.port());
            assertThat(setup.currentPrimary()).isSameAs(primary);
            assertThat(setup.node(replica.port())).isSameAs(replica);
            assertThat(replica.info("replication", "master_link_status")).isEqualTo("up");
            // The replica replicates through the proxy: holding it stops replication.
            assertThat(replica.info("replication", "master_port"))
                    .isEqualTo(Integer.toString(setup.replicationLink().port()));
            primary.command("SET", "k", "1");
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> "1".equals(replica.command("GET", "k")));
            setup.replicationLink().blackhole();
            primary.command("SET", "k", "2");
            assertThat(replica.command("GET", "k")).isEqualTo("1");

            primary.kill();
            setup.replicationLink().drop();
            setup.replicationLink().cut();
            RedisNode promoted = setup.awaitNewPrimary(primary.port(), FAILOVER);
            assertThat(promoted).isSameAs(replica);
            assertThat(promoted.info("replication", "role")).isEqualTo("master");
            // The write held in the proxy was lost with the primary.
            assertThat(promoted.command("GET", "k")).isEqualTo("1");
        }
    }
}
