package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisClusterSetupTests {

    /**
     * How long a failover may take: no correctness bound, only a guard against a hang (a loaded
     * machine runs Sentinel's and the cluster's timers late, and an aborted attempt is retried).
     */
    private static final Duration FAILOVER = Duration.ofSeconds(60);

    @Test
    void createsSixNodesThatFailOverAfterACrashAndManually() {
        try (RedisClusterSetup cluster = RedisClusterSetup.start(Duration.ofMillis(1000))) {
            assertThat(cluster.nodes()).hasSize(6);
            assertThat(cluster.slot("{tag}:a")).isEqualTo(cluster.slot("{tag}:b"));

            // The first node started is a primary; lookups keep working once it is down.
            RedisNode first = cluster.nodes().get(0);
            assertThat(first.info("replication", "role")).isEqualTo("master");
            String firstKey = keyServedBy(cluster, first, null);
            RedisNode firstReplica = cluster.replicaOf(first);
            RedisNode takeover = cluster.killPrimaryAndAwaitFailover(firstKey, FAILOVER);
            assertThat(takeover).isSameAs(firstReplica);
            assertThat(first.isAlive()).isFalse();
            assertThat(cluster.slot(firstKey)).isBetween(0, 16383);

            // Another shard: a manual hand-over, then a crash of the new primary.
            String key = keyServedBy(cluster, null, takeover);
            RedisNode primary = cluster.primaryFor(key);
            RedisNode replica = cluster.replicaOf(primary);
            assertThat(replica.info("replication", "master_port"))
                    .isEqualTo(Integer.toString(primary.port()));
            RedisNode promoted = cluster.manualFailover(key, FAILOVER);
            assertThat(promoted).isSameAs(replica);
            assertThat(cluster.primaryFor(key)).isSameAs(replica);
            RedisNode afterCrash = cluster.killPrimaryAndAwaitFailover(key, FAILOVER);
            assertThat(afterCrash).isSameAs(primary);
        }
    }

    @Test
    void manualFailoversBackAndForthRightAfterEachOther() {
        try (RedisClusterSetup cluster = RedisClusterSetup.start(Duration.ofMillis(1000))) {
            String key = "{back}";
            RedisNode primary = cluster.primaryFor(key);
            RedisNode replica = cluster.replicaOf(primary);

            RedisNode promoted = cluster.manualFailover(key, FAILOVER);
            assertThat(promoted).isSameAs(replica);
            // The old primary is the new one's replica once the failover returns...
            assertThat(cluster.replicaOf(promoted)).isSameAs(primary);
            // ...and a hand-over back at once works: the new primary must already know it as its
            // replica, or it ignores the request and the replica gives up after 5 s.
            RedisNode back = cluster.manualFailover(key, FAILOVER);
            assertThat(back).isSameAs(primary);
            assertThat(cluster.replicaOf(back)).isSameAs(replica);
            // ...and once more: the replica won an election a moment ago, which Redis counts as
            // won again at once, without asking for votes, and then abandons.
            RedisNode again = cluster.manualFailover(key, FAILOVER);
            assertThat(again).isSameAs(replica);
            assertThat(cluster.replicaOf(again)).isSameAs(primary);
        }
    }

    /** Returns a key served by {@code primary}, or by any primary other than {@code not}. */
    private static String keyServedBy(RedisClusterSetup cluster, RedisNode primary, RedisNode not) {
        for (int i = 0; ; i++) {
            String key = "{k" + i + "}";
            RedisNode serving = cluster.primaryFor(key);
            if (primary != null ? serving == primary : serving != not) {
                return key;
            }
        }
    }
}
