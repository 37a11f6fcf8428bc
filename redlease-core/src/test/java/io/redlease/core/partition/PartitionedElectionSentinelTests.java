package io.redlease.core.partition;

import io.redlease.test.RedisNode;
import io.redlease.test.RedisSentinelSetup;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** A partitioned election through Redis Sentinel (one primary, one replica, three Sentinels). */
class PartitionedElectionSentinelTests {

    @Test
    void promotingTheReplicaOfAKilledPrimaryLeavesEachPartitionHeldOnceWithTokensRising(
            TestInfo info) {
        try (RedisSentinelSetup setup = RedisSentinelSetup.start(Duration.ofMillis(500));
                Connections connections = new Connections();
                FailoverInstances instances =
                        new FailoverInstances(
                                Connections.unique(info), () -> connections.sentinel(setup))) {
            instances.awaitBalanced();
            RedisNode primary = setup.currentPrimary();
            FailoverInstances.awaitReplicated(primary, setup.initialReplica());
            Map<Integer, Long> before = instances.tokensSoFar();
            primary.kill();
            setup.awaitNewPrimary(primary.port(), FailoverInstances.RECOVERY);
            instances.awaitBalancedWithTokensAbove(before);
        }
    }
}
