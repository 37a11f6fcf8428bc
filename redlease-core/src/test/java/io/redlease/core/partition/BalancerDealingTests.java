package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Two instances below their share, on a real Redis and a clock of the test's own, find the
 * partitions of an instance that has left the member set still held (it is releasing them one after
 * another): each awaits a run of its own, neither the other's, and on hearing a partition's release
 * only the instance it was dealt to campaigns for it.
 */
@ExtendWith(RedisExtension.class)
class BalancerDealingTests {

    private static final int PARTITIONS = 6;

    private static final Duration INTERVAL = Duration.ofMillis(500);

    private final Connections connections = new Connections();

    private final AtomicLong clock = new AtomicLong();

    private final List<Elector> electors = new ArrayList<>();

    private final List<Balancer> balancers = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        redis = connections.to(server);
        name = Connections.unique(info);
        // "gone" holds every partition for longer than the test runs, and is no member.
        for (int partition = 0; partition < PARTITIONS; partition++) {
            redis.opsForValue()
                    .set(
                            PartitionedElection.electionName(name, partition) + ":leader",
                            "gone",
                            Duration.ofMinutes(1));
        }
    }

    @AfterEach
    void tearDown() {
        balancers.forEach(Balancer::stopAll);
        electors.forEach(Elector::close);
        connections.close();
    }

    private Elector[] electors(String id) {
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder(name, PARTITIONS)
                        .ttl(Duration.ofSeconds(2))
                        .instanceId(id)
                        .build();
        Elector[] own = new Elector[PARTITIONS];
        for (int partition = 0; partition < PARTITIONS; partition++) {
            own[partition] =
                    new Elector(
                            redis,
                            config.partition(
                                    partition, new PartitionObserver(partition, List.of())));
            electors.add(own[partition]);
        }
        return own;
    }

    private Balancer balancer(String id, Elector[] own) {
        Membership membership =
                new Membership(
                        redis, name, id, Duration.ofMinutes(1), INTERVAL, INTERVAL, clock::get);
        Balancer balancer =
                new Balancer(own, redis, membership, id, INTERVAL, INTERVAL, clock::get);
        balancers.add(balancer);
        return balancer;
    }

    private static Set<Integer> running(Elector[] own) {
        Set<Integer> running = new TreeSet<>();
        for (int partition = 0; partition < own.length; partition++) {
            if (own[partition].isRunning()) {
                running.add(partition);
            }
        }
        return running;
    }

    @Test
    void instancesBelowTheirShareAwaitDisjointRunsOfAFormerMembersPartitions() {
        Elector[] ofB = electors("b");
        Elector[] ofC = electors("c");
        Balancer b = balancer("b", ofB);
        Balancer c = balancer("c", ofC);
        // First looks, then each sees the other, then both have joined and count each other.
        c.round();
        b.round();
        clock.addAndGet(INTERVAL.toNanos() / 2);
        c.round();
        b.round();
        clock.addAndGet(INTERVAL.toNanos());

        b.round();
        c.round();

        assertThat(b.share()).isEqualTo(3);
        assertThat(c.share()).isEqualTo(3);
        assertThat(awaited(b)).containsExactly(0, 1, 2);
        assertThat(awaited(c)).containsExactly(3, 4, 5);
        assertThat(running(ofB)).isEmpty();
        assertThat(running(ofC)).isEmpty();

        // "gone" releases partition 4: both hear it, only c campaigns.
        redis.delete(PartitionedElection.electionName(name, 4) + ":leader");
        b.take(4);
        c.take(4);
        assertThat(running(ofB)).isEmpty();
        assertThat(running(ofC)).containsExactly(4);
        assertThat(b.campaigns() + c.campaigns()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> ofC[4].isLeader());

        // Looking again while the others are still held deals them as before.
        c.round();
        b.round();
        assertThat(awaited(b)).containsExactly(0, 1, 2);
        assertThat(awaited(c)).containsExactly(3, 5);
        assertThat(running(ofB)).isEmpty();
        assertThat(running(ofC)).containsExactly(4);
        assertThat(b.campaigns() + c.campaigns()).isEqualTo(1);
    }

    private static Set<Integer> awaited(Balancer balancer) {
        Set<Integer> awaited = new TreeSet<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            if (balancer.awaits(partition)) {
                awaited.add(partition);
            }
        }
        return awaited;
    }
}
