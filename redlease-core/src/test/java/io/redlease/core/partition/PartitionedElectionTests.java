package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.StepDownReason;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Several instances in one JVM, each on connections of its own, against one real Redis. */
@ExtendWith(RedisExtension.class)
class PartitionedElectionTests {

    private static final int PARTITIONS = 24;

    private static final Duration TTL = Duration.ofSeconds(1);

    private static final Duration REBALANCE = Duration.ofSeconds(15);

    private final Connections connections = new Connections();

    private final List<PartitionedElection> instances = new CopyOnWriteArrayList<>();

    private final List<TcpProxy> proxies = new ArrayList<>();

    /** Every term won, by partition and token: a token handed out twice would collide here. */
    private final Map<String, Term> terms = new ConcurrentHashMap<>();

    private final List<Term> duplicates = new CopyOnWriteArrayList<>();

    private final List<Revocation> revocations = new CopyOnWriteArrayList<>();

    private RedisServer server;

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = connections.to(server);
        this.name = Connections.unique(info);
    }

    @AfterEach
    void tearDown() {
        proxies.forEach(TcpProxy::close);
        instances.forEach(PartitionedElection::close);
        connections.close();
    }

    private PartitionedElection instance(String id) {
        return instance(
                id, connections.to(server), PartitionedElectionConfig.builder(name, PARTITIONS));
    }

    private PartitionedElection instance(
            String id, StringRedisTemplate template, PartitionedElectionConfig.Builder builder) {
        builder.ttl(TTL)
                .instanceId(id)
                .listener(
                        new PartitionListener() {
                            @Override
                            public void onAssigned(int partition, long token) {
                                Term term = new Term(partition, token, id);
                                if (terms.putIfAbsent(partition + "/" + token, term) != null) {
                                    duplicates.add(term);
                                }
                            }

                            @Override
                            public void onRevoked(
                                    int partition, long token, StepDownReason reason) {
                                revocations.add(new Revocation(partition, token, id, reason));
                            }
                        });
        PartitionedElection instance = new PartitionedElection(template, builder.build());
        instances.add(instance);
        return instance;
    }

    private List<PartitionedElection> started(String... ids) {
        List<PartitionedElection> started = new ArrayList<>();
        for (String id : ids) {
            PartitionedElection instance = instance(id);
            instance.start();
            started.add(instance);
        }
        return started;
    }

    /**
     * Asserts that every partition is held by exactly one of the instances, that their counts
     * differ by at most one, that Redis's lease names the same holder, and that the term's
     * assignment was heard and holds the partition's newest token.
     */
    private void assertBalanced(List<PartitionedElection> live) {
        String[] holders = new String[PARTITIONS];
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (PartitionedElection instance : live) {
            var owned = instance.owned();
            min = Math.min(min, owned.size());
            max = Math.max(max, owned.size());
            for (int partition : owned) {
                assertThat(holders[partition])
                        .as("second holder of partition %d", partition)
                        .isNull();
                holders[partition] = instance.instanceId();
            }
        }
        assertThat(max - min).as("imbalance").isLessThanOrEqualTo(1);
        for (int partition = 0; partition < PARTITIONS; partition++) {
            String key = PartitionedElection.electionName(name, partition);
            assertThat(holders[partition]).as("holder of partition %d", partition).isNotNull();
            assertThat(redis.opsForValue().get(key + ":leader")).isEqualTo(holders[partition]);
            // Read again by the wait if the partition moved since owned() was read: an assertion
            // failure, not a NoSuchElementException that would end the wait.
            int p = partition;
            long token =
                    owner(live, p)
                            .token(p)
                            .orElseThrow(
                                    () -> new AssertionError("partition " + p + " has no token"));
            assertThat(redis.opsForValue().get(key + ":fence")).isEqualTo(Long.toString(token));
            assertThat(terms.get(partition + "/" + token))
                    .isEqualTo(new Term(partition, token, holders[partition]));
        }
        assertThat(duplicates).isEmpty();
    }

    private static PartitionedElection owner(List<PartitionedElection> live, int partition) {
        return live.stream()
                .filter(i -> i.owns(partition))
                .findFirst()
                .orElseThrow(() -> new AssertionError("partition " + partition + " has no owner"));
    }

    private void awaitBalanced(List<PartitionedElection> live) {
        await().atMost(REBALANCE).untilAsserted(() -> assertBalanced(live));
    }

    @Test
    void everyPartitionIsOwnedExactlyOnceAndBalanced() {
        List<PartitionedElection> live = started("a", "b", "c");
        awaitBalanced(live);
        assertThat(live).allSatisfy(i -> assertThat(i.owned()).hasSize(PARTITIONS / 3));
        assertThat(live).allSatisfy(i -> assertThat(i.handedOver()).isZero());
        assertThat(live).allSatisfy(i -> assertThat(i.members()).containsExactly("a", "b", "c"));
    }

    @Test
    void aJoinMovesAboutTheNewcomersShare() {
        List<PartitionedElection> live = new ArrayList<>(started("a", "b", "c"));
        awaitBalanced(live);
        long[] before = new long[PARTITIONS];
        for (int partition = 0; partition < PARTITIONS; partition++) {
            before[partition] = owner(live, partition).token(partition).orElseThrow();
        }
        long handedOverBefore = live.stream().mapToLong(PartitionedElection::handedOver).sum();
        live.addAll(started("d"));
        awaitBalanced(live);
        long moves = terms.values().stream().filter(t -> t.token() > before[t.partition()]).count();
        assertThat(live.get(3).owned()).hasSize(PARTITIONS / 4);
        assertThat(moves).isBetween((long) PARTITIONS / 4, (long) PARTITIONS / 4 + 2);
        assertThat(live.stream().mapToLong(PartitionedElection::handedOver).sum())
                .isEqualTo(handedOverBefore + moves);
    }

    @Test
    void aGracefulLeaveHandsItsPartitionsOver() {
        List<PartitionedElection> live = new ArrayList<>(started("a", "b", "c", "d"));
        awaitBalanced(live);
        PartitionedElection leaver = live.remove(1);
        var left = leaver.owned();
        leaver.close();
        assertThat(leaver.owned()).isEmpty();
        assertThat(leaver.isRunning()).isFalse();
        awaitBalanced(live);
        await().atMost(REBALANCE)
                .untilAsserted(
                        () ->
                                assertThat(
                                                revocations.stream()
                                                        .filter(r -> r.instance().equals("b"))
                                                        .toList())
                                        .hasSize(left.size())
                                        .allMatch(r -> r.reason() == StepDownReason.SHUTDOWN));
        assertThat(live).allSatisfy(i -> assertThat(i.members()).containsExactly("a", "c", "d"));
    }

    @Test
    void anInstanceThatStopsAnsweringIsCountedOutAndItsPartitionsTakenOver() {
        List<PartitionedElection> live = new ArrayList<>(started("a", "b", "c"));
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        PartitionedElection cut =
                instance(
                        "d",
                        connections.to(
                                proxy.host(),
                                proxy.port(),
                                server.password(),
                                Duration.ofSeconds(1)),
                        PartitionedElectionConfig.builder(name, PARTITIONS));
        cut.start();
        live.add(cut);
        awaitBalanced(live);
        var stranded = cut.owned();
        assertThat(stranded).isNotEmpty();

        proxy.blackhole();
        live.remove(cut);
        awaitBalanced(live);
        await().atMost(TTL.multipliedBy(3)).until(() -> cut.owned().isEmpty());
        assertThat(live).allSatisfy(i -> assertThat(i.members()).containsExactly("a", "b", "c"));
        await().atMost(REBALANCE)
                .untilAsserted(
                        () ->
                                assertThat(revocations)
                                        .filteredOn(r -> r.instance().equals("d"))
                                        .extracting(Revocation::partition)
                                        .containsAll(stranded));
    }

    @Test
    void tokensIncreasePerPartitionAcrossMoves() {
        List<PartitionedElection> live = new ArrayList<>(started("a", "b"));
        awaitBalanced(live);
        live.addAll(started("c", "d"));
        awaitBalanced(live);
        live.remove(0).close();
        awaitBalanced(live);
        for (int partition = 0; partition < PARTITIONS; partition++) {
            int p = partition;
            List<Term> history =
                    terms.values().stream()
                            .filter(t -> t.partition() == p)
                            .sorted((x, y) -> Long.compare(x.token(), y.token()))
                            .toList();
            long newest = owner(live, p).token(p).orElseThrow();
            assertThat(history).isNotEmpty();
            assertThat(history.get(history.size() - 1).token()).isEqualTo(newest);
        }
        assertThat(duplicates).isEmpty();
    }

    @Test
    void aMemberStillSettlingGetsNothingHandedOver() {
        PartitionedElection a =
                instance(
                        "a",
                        connections.to(server),
                        PartitionedElectionConfig.builder(name, PARTITIONS)
                                .settle(Duration.ofMinutes(5)));
        a.start();
        awaitBalanced(List.of(a));
        PartitionedElection newcomer = started("b").get(0);
        await().atMost(REBALANCE).until(() -> a.members().contains("b"));
        await().during(TTL.multipliedBy(2))
                .atMost(TTL.multipliedBy(3))
                .until(() -> newcomer.owned().isEmpty() && a.handedOver() == 0);
        assertThat(a.share()).isEqualTo(PARTITIONS);
        assertThat(newcomer.share()).isEqualTo(PARTITIONS / 2);
        assertBalanced(List.of(a));
    }

    @Test
    void fencerWritesForTheCurrentTermAndRefusesAStaleOne() {
        PartitionedElection a = started("a").get(0);
        await().atMost(REBALANCE).until(() -> a.owned().size() == PARTITIONS);
        int partition = a.partitionOf("tenant-42");
        String key = a.electionName(partition) + ":state";
        long token = a.token(partition).orElseThrow();
        assertThat(a.fencer(partition).orElseThrow().set(key, "first")).isTrue();
        assertThat(a.fencer(partition, token - 1).set(key, "stale")).isFalse();
        assertThat(redis.opsForValue().get(key)).isEqualTo("first");
        assertThat(a.ownsKey("tenant-42")).isTrue();
    }

    @Test
    void partitionOfIsCrc32OfTheUtf8BytesModuloTheCount() {
        assertThat(PartitionedElection.partitionOf("", 256)).isZero();
        assertThat(PartitionedElection.partitionOf("123456789", 256)).isEqualTo(38);
        assertThat(PartitionedElection.partitionOf("123456789", 7)).isEqualTo(5);
        assertThat(PartitionedElection.partitionOf("a", 256)).isEqualTo(67);
        assertThat(PartitionedElection.partitionOf("tenant-42", 16)).isEqualTo(12);
        assertThat(PartitionedElection.partitionOf("orders:1001", 256)).isEqualTo(23);
        assertThat(PartitionedElection.partitionOf("ünïcødé", 256)).isEqualTo(248);
        assertThat(PartitionedElection.partitionOf("anything", 1)).isZero();
    }

    @Test
    void argumentsOutOfRangeAreRejected() {
        PartitionedElection a = instance("a");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> a.owns(PARTITIONS))
                .withMessage("redlease: partition must be between 0 and 23; got 24");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> PartitionedElection.partitionOf("k", 0))
                .withMessage("redlease: partitions must be at least 1; got 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new PartitionedElection(redis, null))
                .withMessage("redlease: config must not be null");
    }

    @Test
    void aStoppedElectionLeavesAndStartsAgainWithNewTerms() {
        PartitionedElection a = started("a").get(0);
        assertThatIllegalStateException()
                .isThrownBy(a::start)
                .withMessageContaining("already running");
        await().atMost(REBALANCE).until(() -> a.owned().size() == PARTITIONS);
        long before = a.token(0).orElseThrow();
        a.stop();
        assertThat(a.isRunning()).isFalse();
        assertThat(a.owned()).isEmpty();
        assertThat(redis.opsForZSet().score(Membership.membersKey(name), "a")).isNull();
        a.stop(); // stopping a stopped election does nothing
        a.start();
        assertThat(a.isRunning()).isTrue();
        await().atMost(REBALANCE).until(() -> a.owned().size() == PARTITIONS);
        assertThat(redis.opsForZSet().score(Membership.membersKey(name), "a")).isNotNull();
        assertThat(a.token(0).orElseThrow()).isGreaterThan(before);
        assertBalanced(List.of(a));
    }

    record Term(int partition, long token, String instance) {}

    record Revocation(int partition, long token, String instance, StepDownReason reason) {}
}
