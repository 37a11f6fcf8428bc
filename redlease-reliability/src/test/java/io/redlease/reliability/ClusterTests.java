package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Fencer;
import io.redlease.core.InvalidElectorConfigException;
import io.redlease.test.RedisClusterSetup;
import io.redlease.test.RedisNode;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Redis Cluster (three primaries, three replicas) through Spring Data Redis's {@code
 * RedisClusterConfiguration}: a name without a hash tag fails fast, a hash-tagged name and
 * hash-tagged fenced keys work, a key in another slot is refused, and leadership survives a manual
 * failover and the crash of the primary owning the slot.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTests {

    /**
     * How long a failover may take: no correctness bound, only a guard against a hang (a loaded
     * machine runs Sentinel's and the cluster's timers late, and an aborted attempt is retried).
     */
    private static final Duration FAILOVER = Duration.ofSeconds(60);

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
    @Order(2)
    void hashTaggedNameAndKeysWorkAndAKeyInAnotherSlotIsRefused(TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, () -> connections.cluster(cluster.nodes()))) {
            // "no-tag-" is declared, so the key passes the client's namespace check and reaches
            // the cluster, which refuses a script over two slots; an undeclared key never leaves.
            harness.candidate(
                    "a",
                    Workload.steady(Duration.ofMillis(5)),
                    b -> b.fencedKeyPrefixes("no-tag-"));
            harness.candidate(
                    "b",
                    Workload.steady(Duration.ofMillis(5)),
                    b -> b.fencedKeyPrefixes("no-tag-"));
            harness.awaitWritingLeader(5);
            String mark = harness.control().opsForValue().get(harness.log.markKey());
            String otherSlot = "no-tag-" + harness.name.replace("{", "").replace("}", "");
            // With a 500 ms time to live a loaded machine may end a term between the look and the
            // writes; the check is then made again with whoever leads.
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(30)))
                    .ignoreExceptions()
                    .untilAsserted(
                            () -> {
                                Candidate leader = harness.awaitWritingLeader(1);
                                Fencer fencer =
                                        leader.elector.fencer(leader.elector.token().orElseThrow());
                                assertThatThrownBy(
                                                () ->
                                                        fencer.eval(
                                                                "redis.call('SET', KEYS[2],"
                                                                        + " ARGV[2])",
                                                                List.of("undeclared-key"),
                                                                "x"))
                                        .isInstanceOf(IllegalArgumentException.class)
                                        .hasMessageContaining("undeclared-key")
                                        .hasMessageContaining("fencedKeyPrefixes");
                                assertThatThrownBy(
                                                () ->
                                                        fencer.eval(
                                                                "redis.call('SET', KEYS[2],"
                                                                        + " ARGV[2])",
                                                                List.of(otherSlot),
                                                                "x"))
                                        .isInstanceOf(DataAccessException.class)
                                        .hasStackTraceContaining("CROSSSLOT");
                            });
            assertThat(Long.parseLong(harness.control().opsForValue().get(harness.log.markKey())))
                    .isGreaterThanOrEqualTo(Long.parseLong(mark));
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    @Order(3)
    void leadershipSurvivesAManualFailoverOfThePrimaryOwningTheSlot(TestInfo info)
            throws Exception {
        failover(
                info,
                "manual CLUSTER FAILOVER",
                key -> cluster.manualFailover(key, scaled(FAILOVER)),
                true);
    }

    @Test
    @Order(4)
    void leadershipSurvivesTheFailoverOfAKilledPrimaryOwningTheSlot(TestInfo info)
            throws Exception {
        // cluster-node-timeout is 1 s: the replica takes over within a few seconds.
        failover(
                info,
                "primary killed",
                key -> cluster.killPrimaryAndAwaitFailover(key, scaled(FAILOVER)),
                false);
    }

    private static void failover(
            TestInfo info,
            String what,
            java.util.function.Function<String, RedisNode> fault,
            boolean logComplete)
            throws Exception {
        try (Harness harness = new Harness(info, () -> connections.cluster(cluster.nodes()))) {
            harness.timings(
                    Duration.ofMillis(1000), Duration.ofMillis(200), Duration.ofMillis(200));
            harness.candidate("a", Workload.steady(Duration.ofMillis(5)));
            harness.candidate("b", Workload.steady(Duration.ofMillis(5)));
            harness.awaitWritingLeader(5);
            if (!logComplete) {
                // The current term reaches the replica before its primary is killed: this test is
                // about the failover; a term lost with the primary is SentinelTests' boundary.
                // WAIT counts the writes of its own connection, hence the marker SET first.
                RedisNode primary = cluster.primaryFor(harness.name + ":leader");
                try (io.redlease.test.RespClient client = primary.client(Duration.ofSeconds(10))) {
                    client.command("SET", harness.name + ":replicated", "1");
                    assertThat(client.command("WAIT", "1", "5000")).isEqualTo(1L);
                }
            }
            long start = System.nanoTime();
            RedisNode promoted = fault.apply(harness.name + ":leader");
            long promotedAt = System.nanoTime();
            harness.fault("Cluster failover: " + what, start, promotedAt);
            Figures.duration("Cluster: " + what + " -> replica promoted", promotedAt - start);
            // Writes applied on the promoted primary itself: its log grows.
            long before = llen(promoted, harness);
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(20)))
                    .pollInterval(Duration.ofMillis(5))
                    .ignoreExceptionsInstanceOf(UncheckedIOException.class)
                    .until(() -> llen(promoted, harness) > before + 3);
            Figures.duration(
                    "Cluster: " + what + " -> writes applied on the promoted primary",
                    System.nanoTime() - start);
            harness.stopAll();
            // A killed primary takes its unreplicated writes with it; a manual failover waits
            // for the replica to catch up, so nothing applied may be missing.
            Harness.assertSafe(harness.check(logComplete));
        }
    }

    /** Reads the length of the suite's log on a node, again if the failover resets the poll. */
    private static long llen(RedisNode node, Harness harness) {
        Object reply =
                Awaitility.await()
                        .atMost(scaled(Duration.ofSeconds(10)))
                        .pollInterval(Duration.ofMillis(20))
                        .ignoreExceptionsInstanceOf(UncheckedIOException.class)
                        .until(() -> node.command("LLEN", harness.log.key()), any -> true);
        return reply instanceof Long n ? n : 0;
    }

    @Test
    @Order(5)
    void theWinningAcquirePublishesTheLeaderMetadataInTheLeasesSlot(TestInfo info) {
        // The acquire script also writes <name>:leader:info, in the lease's slot by the hash tag;
        // with a preference it touches <name>:candidates too: both on the cluster.
        String name = "{" + info.getTestMethod().orElseThrow().getName() + System.nanoTime() + "}";
        StringRedisTemplate redis = connections.cluster(cluster.nodes());
        try (Elector plain = discoveryElector(redis, name + "-plain", "plain");
                Elector preferring = discoveryElector(redis, name + "-preferring", "preferring");
                Elector reader = discoveryElector(redis, name + "-plain", "reader")) {
            preferring.prefer(io.redlease.core.Preference.priority(1), () -> true);
            plain.start();
            preferring.start();
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(10)))
                    .until(() -> plain.isLeader() && preferring.isLeader());
            assertThat(reader.leaderInfo())
                    .hasValueSatisfying(
                            leader -> {
                                assertThat(leader.instanceId()).isEqualTo("plain");
                                assertThat(leader.url()).contains("http://plain:8080");
                                assertThat(leader.token()).isEqualTo(plain.token().orElseThrow());
                            });
            assertThat(preferring.leaderInfo())
                    .hasValueSatisfying(
                            leader -> assertThat(leader.url()).contains("http://preferring:8080"));
        }
    }

    private static Elector discoveryElector(StringRedisTemplate redis, String name, String id) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(200))
                                .acquireInterval(Duration.ofMillis(200))
                                .instanceId(id)
                                .build());
        elector.advertise(io.redlease.core.LeaderMetadata.url("http://" + id + ":8080"));
        return elector;
    }

    @Test
    @Order(1)
    void nameWithoutAHashTagFailsFastOnAClusterWithTheFixInTheMessage() {
        StringRedisTemplate redis = connections.cluster(cluster.nodes());
        assertThatThrownBy(() -> new Elector(redis, ElectorConfig.builder("no-hash-tag").build()))
                .isInstanceOfSatisfying(
                        InvalidElectorConfigException.class,
                        ex ->
                                assertThat(ex.setting())
                                        .isEqualTo(InvalidElectorConfigException.Setting.NAME))
                .hasMessageContaining("hash tag")
                .hasMessageContaining("'{no-hash-tag}'");
        // A hash-tagged name on the same factory is accepted.
        new Elector(redis, ElectorConfig.builder("{tagged}").build()).close();
    }
}
