package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisClusterSetup;
import io.redlease.test.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A partitioned election on a Redis Cluster of three primaries and three replicas; the failover
 * test runs last, as it kills a primary.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PartitionedElectionClusterTests {

    private static final int PARTITIONS = 12;

    private static RedisClusterSetup cluster;

    private static Connections connections;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterSetup.start(Duration.ofMillis(1000));
        connections = new Connections();
    }

    @AfterAll
    static void stopCluster() {
        if (connections != null) {
            connections.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void partitionsSpreadOverThePrimariesAndFenceUnderTheirOwnHashTag(TestInfo info) {
        String name = Connections.unique(info);
        List<PartitionedElection> live = new ArrayList<>();
        try {
            for (String id : List.of("a", "b")) {
                PartitionedElection instance =
                        new PartitionedElection(
                                connections.cluster(cluster.nodes()),
                                PartitionedElectionConfig.builder(name, PARTITIONS)
                                        // Placement, not timing: a long TTL keeps a loaded
                                        // machine's late renewal from lapsing a lease mid-check.
                                        .ttl(Duration.ofSeconds(10))
                                        .instanceId(id)
                                        .build());
                instance.start();
                live.add(instance);
            }
            await().atMost(Duration.ofSeconds(20))
                    .until(
                            () ->
                                    live.stream().allMatch(i -> i.owned().size() == PARTITIONS / 2)
                                            && live.stream()
                                                    .allMatch(i -> i.members().size() == 2));
            StringRedisTemplate control = connections.cluster(cluster.nodes());
            Set<String> primaries = new HashSet<>();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                int p = partition;
                // The instance that owns the partition and the holder Redis names, read together
                // again if a hand-over fell between the two reads.
                PartitionedElection[] held = new PartitionedElection[1];
                await().atMost(Duration.ofSeconds(20))
                        .untilAsserted(
                                () -> {
                                    PartitionedElection owner =
                                            live.stream()
                                                    .filter(i -> i.owns(p))
                                                    .findFirst()
                                                    .orElse(null);
                                    assertThat(owner).as("partition %d's owner", p).isNotNull();
                                    assertThat(
                                                    control.opsForValue()
                                                            .get(owner.electionName(p) + ":leader"))
                                            .as("partition %d's lease", p)
                                            .isEqualTo(owner.instanceId());
                                    held[0] = owner;
                                });
                PartitionedElection owner = held[0];
                String leaseKey = owner.electionName(p) + ":leader";
                primaries.add(cluster.primaryFor(leaseKey).address());
                String state = owner.electionName(p) + ":state";
                assertThat(owner.fencer(p).orElseThrow().set(state, "p" + p)).isTrue();
                assertThat(control.opsForValue().get(state)).isEqualTo("p" + p);
            }
            assertThat(primaries).hasSizeGreaterThan(1);
        } finally {
            live.forEach(PartitionedElection::close);
        }
    }

    @Test
    @Order(2)
    void promotingTheReplicaOfAKilledPrimaryLeavesEachPartitionHeldOnceWithTokensRising(
            TestInfo info) {
        try (Connections own = new Connections();
                FailoverInstances instances =
                        new FailoverInstances(
                                Connections.unique(info), () -> own.cluster(cluster.nodes()))) {
            instances.awaitBalanced();
            String leaseKey = PartitionedElection.electionName(instances.name, 0) + ":leader";
            RedisNode primary = cluster.primaryFor(leaseKey);
            FailoverInstances.awaitReplicated(primary, cluster.replicaOf(primary));
            Map<Integer, Long> before = instances.tokensSoFar();
            cluster.killPrimaryAndAwaitFailover(leaseKey, FailoverInstances.RECOVERY);
            instances.awaitBalancedWithTokensAbove(before);
        }
    }
}
