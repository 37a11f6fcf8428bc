package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One instance's balancing rounds against leases another member holds, on a real Redis and a clock
 * of the test's own: how it finds free partitions and when it looks again.
 */
@ExtendWith(RedisExtension.class)
class BalancerRoundTests {

    private static final int PARTITIONS = 4;

    private static final Duration INTERVAL = Duration.ofMillis(500);

    private static final Duration SETTLE = Duration.ofMillis(500);

    private final Connections connections = new Connections();

    private final AtomicLong clock = new AtomicLong();

    private StringRedisTemplate redis;

    /** Run once right after the next read of the holders returns, before the look deals. */
    private final AtomicReference<Runnable> afterRead = new AtomicReference<>();

    private String name;

    private Elector[] electors;

    private Balancer balancer;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        redis = connections.to(server);
        name = Connections.unique(info);
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder(name, PARTITIONS)
                        .ttl(Duration.ofSeconds(2))
                        .instanceId("b")
                        .build();
        electors = new Elector[PARTITIONS];
        for (int partition = 0; partition < PARTITIONS; partition++) {
            electors[partition] =
                    new Elector(
                            redis,
                            config.partition(
                                    partition, new PartitionObserver(partition, List.of())));
        }
        // Member "a" holds every partition, for longer than the test runs.
        new Membership(redis, name, "a", Duration.ofMinutes(1), SETTLE, INTERVAL, clock::get)
                .refresh();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            redis.opsForValue().set(leaseKey(partition), "a", Duration.ofMinutes(1));
        }
        Membership membership =
                new Membership(
                        redis, name, "b", Duration.ofSeconds(2), SETTLE, INTERVAL, clock::get);
        balancer = new Balancer(electors, reading(), membership, "b", INTERVAL, SETTLE, clock::get);
    }

    @AfterEach
    void tearDown() {
        balancer.stopAll();
        for (Elector elector : electors) {
            elector.close();
        }
        connections.close();
    }

    /** A template whose reads of the holders run {@link #afterRead} once they return. */
    private StringRedisTemplate reading() {
        StringRedisTemplate template =
                new StringRedisTemplate(redis.getRequiredConnectionFactory()) {
                    @Override
                    public <T> T execute(RedisCallback<T> action) {
                        T result = super.execute(action);
                        Runnable after = afterRead.getAndSet(null);
                        if (after != null) {
                            after.run();
                        }
                        return result;
                    }
                };
        template.afterPropertiesSet();
        return template;
    }

    /** a releases a partition, and b hears it, while b's next look reads the holders. */
    private void releasedDuringTheRead(int partition) {
        afterRead.set(
                () -> {
                    redis.delete(leaseKey(partition));
                    balancer.released(partition);
                });
    }

    private String leaseKey(int partition) {
        return PartitionedElection.electionName(name, partition) + ":leader";
    }

    @Test
    void aRoundWokenWhileJoiningKeepsTheEndOfTheJoinPeriod() {
        long interval = INTERVAL.toNanos();
        assertThat(balancer.round()).as("first look: not joined yet").isEqualTo(interval);
        clock.addAndGet(interval / 5);
        assertThat(balancer.round())
                .as("woken (another member's join heard): the join period still ends on time")
                .isEqualTo(interval - interval / 5);
        clock.addAndGet(interval - interval / 5);
        assertThat(balancer.round()).as("joined, share 2, nothing free").isLessThan(interval);
        assertThat(balancer.share()).isEqualTo(2);
    }

    @Test
    void belowItsShareAnInstanceLooksFiveTimesPerIntervalUntilNothingMovesForAWhile() {
        long interval = INTERVAL.toNanos();
        long quick = interval / Balancer.QUICK_ROUNDS;
        assertThat(balancer.round()).as("first look: not joined yet").isEqualTo(interval);
        clock.addAndGet(interval);
        assertThat(balancer.round()).as("joined, share 2, nothing free").isEqualTo(quick);
        assertThat(balancer.share()).isEqualTo(2);
        clock.addAndGet(SETTLE.toNanos() + 2 * interval - 1);
        assertThat(balancer.round()).as("still short, inside the window").isEqualTo(quick);
        clock.addAndGet(1);
        assertThat(balancer.round()).as("still short, window over").isEqualTo(interval);
        for (Elector elector : electors) {
            assertThat(elector.isRunning()).isFalse();
        }

        redis.delete(leaseKey(1));
        assertThat(balancer.round()).as("took one, still short: quick again").isEqualTo(quick);
        assertThat(electors[1].isRunning()).isTrue();
        clock.addAndGet(SETTLE.toNanos() + 2 * interval);
        assertThat(balancer.round()).as("no progress for the window").isEqualTo(interval);
        redis.delete(leaseKey(3));
        assertThat(balancer.round())
                .as("took the second: quick until its campaigns are won")
                .isEqualTo(quick);
        assertThat(electors[3].isRunning()).isTrue();
        assertThat(electors[0].isRunning() || electors[2].isRunning()).isFalse();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> electors[1].isLeader() && electors[3].isLeader());
        assertThat(balancer.round()).as("both won, at its share").isEqualTo(interval);

        redis.delete(leaseKey(0));
        assertThat(balancer.round())
                .as("at its share: a free partition stays free")
                .isEqualTo(interval);
        assertThat(electors[0].isRunning()).isFalse();
    }

    @Test
    void aPartitionTakenOnHearingItsReleaseRestartsTheQuickRoundsLikeOneTakenByARound() {
        long interval = INTERVAL.toNanos();
        long quick = interval / Balancer.QUICK_ROUNDS;
        long window = SETTLE.toNanos() + 2 * interval;
        assertThat(balancer.round()).as("first look: not joined yet").isEqualTo(interval);
        clock.addAndGet(interval);
        assertThat(balancer.round()).as("joined, share 2, a's surplus awaited").isEqualTo(quick);
        assertThat(balancer.awaited()).isEqualTo(2);
        clock.addAndGet(window - 1);
        // a hands its highest partition over, and b hears the release: b takes it at once.
        redis.delete(leaseKey(3));
        balancer.take(3);
        await().atMost(Duration.ofSeconds(10)).until(() -> electors[3].isLeader());
        assertThat(balancer.round()).as("took one, still short").isEqualTo(quick);
        clock.addAndGet(1);
        assertThat(balancer.round())
                .as("the take was progress: quick rounds for a window after it")
                .isEqualTo(quick);
    }

    @Test
    void aReleaseHeardWhileTheLookReadsTheHoldersIsTakenAtTheEndOfThatLook() {
        long interval = INTERVAL.toNanos();
        balancer.round();
        clock.addAndGet(interval);
        // a hands its highest partition over while b's look is reading the holders: the read saw
        // it held, and b heard the release before it dealt.
        releasedDuringTheRead(3);
        balancer.round();
        assertThat(balancer.share()).isEqualTo(2);
        assertThat(balancer.awaits(2)).as("still held: awaited").isTrue();
        assertThat(electors[3].isRunning())
                .as("released during the read: campaigned for at once, not at the next round")
                .isTrue();
        assertThat(balancer.awaits(3)).isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> electors[3].isLeader());
    }

    @Test
    void aLookUnderWayWhenTheElectionLeavesCampaignsForNothing() {
        long interval = INTERVAL.toNanos();
        balancer.round();
        clock.addAndGet(interval);
        for (int partition = 0; partition < PARTITIONS; partition++) {
            redis.delete(leaseKey(partition)); // a left: every partition free, and a release heard
            balancer.released(partition);
        }
        // The election stops while the look reads the holders: the leave runs after it.
        afterRead.set(balancer::leaving);
        balancer.round();
        for (Elector elector : electors) {
            assertThat(elector.isRunning()).as(elector.name()).isFalse();
        }
        balancer.take(3);
        assertThat(electors[3].isRunning()).as("nor does a release heard meanwhile").isFalse();
    }

    @Test
    void aReleaseHeardBeforeTheReadIsNotTakenForOneStillHeld() {
        long interval = INTERVAL.toNanos();
        balancer.round();
        clock.addAndGet(interval);
        // A release of partition 3 heard before the look (by a holder since replaced): the read
        // finds it held again, so b awaits its next release.
        balancer.released(3);
        balancer.round();
        assertThat(balancer.awaits(3)).isTrue();
        assertThat(electors[3].isRunning()).isFalse();
    }

    @Test
    void aReleaseHeardWhileTheLookReadsTheHoldersIsNotExpectedAgainOfAPartitionDealtToAnother() {
        // Members a, b and c: a holds every partition, above its share of 2; its highest, 2 and 3,
        // are dealt to b and c.
        new Membership(redis, name, "c", Duration.ofMinutes(1), SETTLE, INTERVAL, clock::get)
                .refresh();
        long interval = INTERVAL.toNanos();
        balancer.round();
        clock.addAndGet(interval);
        balancer.round();
        assertThat(balancer.share()).isEqualTo(1);
        assertThat(balancer.awaits(2)).isTrue();
        // a hands 3 over while b's look reads the holders: b hears it as the release that look's
        // predecessor expected (no round), and the read still saw a holding it.
        AtomicReference<Boolean> roundForAs = new AtomicReference<>();
        afterRead.set(
                () -> {
                    redis.delete(leaseKey(3));
                    roundForAs.set(heard(3));
                });
        balancer.round();
        assertThat(roundForAs.get()).as("a's release, expected: no round").isFalse();
        // c takes 3, and releases it again.
        redis.opsForValue().set(leaseKey(3), "c", Duration.ofMinutes(1));
        redis.delete(leaseKey(3));
        assertThat(heard(3)).as("c's release, which no look of b saw coming: a round").isTrue();
    }

    /** What the balancing thread does on hearing a release: whether it wakes a round. */
    private boolean heard(int partition) {
        balancer.released(partition);
        return !balancer.awaits(partition) && balancer.needsRound(partition);
    }

    @Test
    void aPartitionLeftFreeForAnIntervalReplacesAnAwaitedOneStillHeldNotOneReleasedDuringTheRead() {
        // Members a and b: a holds 1 and does not take the free partition 0 it is dealt; x, no
        // member, holds 2 and 3, which are dealt to b.
        redis.delete(leaseKey(0));
        redis.opsForValue().set(leaseKey(2), "x", Duration.ofMinutes(1));
        redis.opsForValue().set(leaseKey(3), "x", Duration.ofMinutes(1));
        long interval = INTERVAL.toNanos();
        balancer.round();
        clock.addAndGet(interval);
        balancer.round();
        assertThat(balancer.share()).isEqualTo(2);
        assertThat(balancer.awaits(2) && balancer.awaits(3)).isTrue();
        clock.addAndGet(interval);
        // x releases 3 while b's look reads the holders; 0 has been free for an interval.
        releasedDuringTheRead(3);
        balancer.round();
        assertThat(electors[0].isRunning()).as("free for an interval: taken").isTrue();
        assertThat(electors[3].isRunning())
                .as("released during the read: taken at the end of the look, not given up")
                .isTrue();
        assertThat(balancer.awaits(2)).as("still held: given up for partition 0").isFalse();
        assertThat(electors[2].isRunning()).isFalse();
    }

    @Test
    void aPartitionLeftFreeByTheMemberDealtItIsTakenAfterAnIntervalThoughASurplusIsAwaited() {
        // Members a, b and c: a holds nothing and does not take the free partition 0 it is dealt,
        // c holds 1 to 3, above its share, and does not hand its highest over.
        new Membership(redis, name, "c", Duration.ofMinutes(1), SETTLE, INTERVAL, clock::get)
                .refresh();
        redis.delete(leaseKey(0));
        for (int partition = 1; partition < PARTITIONS; partition++) {
            redis.opsForValue().set(leaseKey(partition), "c", Duration.ofMinutes(1));
        }
        long interval = INTERVAL.toNanos();
        balancer.round();
        clock.addAndGet(interval);
        balancer.round();
        assertThat(balancer.share()).isEqualTo(1);
        assertThat(balancer.awaits(3)).as("c's highest, dealt to b").isTrue();
        assertThat(electors[0].isRunning()).as("partition 0 is dealt to a").isFalse();
        clock.addAndGet(interval);
        balancer.round();
        assertThat(electors[0].isRunning())
                .as("free for a whole interval, and b below its share: b takes it")
                .isTrue();
    }
}
