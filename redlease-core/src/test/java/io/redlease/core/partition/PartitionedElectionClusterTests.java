package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisClusterSetup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.StringRedisTemplate;

/** A partitioned election on a Redis Cluster of three primaries and three replicas. */
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
    void partitionsSpreadOverThePrimariesAndFenceUnderTheirOwnHashTag(TestInfo info) {
        String name = Connections.unique(info);
        List<PartitionedElection> live = new ArrayList<>();
        try {
            for (String id : List.of("a", "b")) {
                PartitionedElection instance =
                        new PartitionedElection(
                                connections.cluster(cluster.nodes()),
                                PartitionedElectionConfig.builder(name, PARTITIONS)
                                        .ttl(Duration.ofSeconds(1))
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
                PartitionedElection owner =
                        live.stream().filter(i -> i.owns(p)).findFirst().orElseThrow();
                String leaseKey = owner.electionName(p) + ":leader";
                assertThat(control.opsForValue().get(leaseKey)).isEqualTo(owner.instanceId());
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
}
