package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

@ExtendWith(RedisExtension.class)
class MembershipTests {

    private static final Duration SETTLE = Duration.ofSeconds(1);

    private static final Duration JOIN = Duration.ofMillis(100);

    private static final Duration TTL = Duration.ofSeconds(10);

    private final Connections connections = new Connections();

    private final AtomicLong clock = new AtomicLong();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = connections.to(server);
        this.name = Connections.unique(info);
    }

    @AfterEach
    void tearDown() {
        connections.close();
    }

    private Membership member(String id, Duration ttl) {
        return new Membership(redis, name, id, ttl, SETTLE, JOIN, clock::get);
    }

    @Test
    void membersSeenWhileJoiningCountAtOnce() {
        member("c", Duration.ofSeconds(10)).refresh();
        Membership b = member("b", Duration.ofSeconds(10));
        assertThat(b.refresh()).containsExactly("b", "c");
        member("a", Duration.ofSeconds(10)).refresh();
        clock.addAndGet(JOIN.toNanos() - 1);
        assertThat(b.refresh()).containsExactly("a", "b", "c");
        assertThat(b.joined()).isFalse();
        clock.addAndGet(1);
        member("d", Duration.ofSeconds(10)).refresh();
        assertThat(b.refresh()).containsExactly("a", "b", "c", "d");
        assertThat(b.joined()).isTrue();
    }

    @Test
    void aNewMemberCountsOnlyAfterTheSettlePeriod() {
        Membership a = joined("a");
        member("b", Duration.ofSeconds(10)).refresh();
        assertThat(a.untilNextCounts()).isEqualTo(Long.MAX_VALUE);
        assertThat(a.refresh()).containsExactly("a");
        assertThat(a.live()).containsExactly("a", "b");
        assertThat(a.untilNextCounts()).isEqualTo(SETTLE.toNanos());
        clock.addAndGet(SETTLE.toNanos() - 1);
        assertThat(a.refresh()).containsExactly("a");
        assertThat(a.untilNextCounts()).isEqualTo(1);
        clock.addAndGet(1);
        assertThat(a.refresh()).containsExactly("a", "b");
        assertThat(a.untilNextCounts()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aMemberThatLeftAndCameBackSettlesForATimeToLive() {
        Membership a = joined("a");
        Membership b = member("b", TTL);
        b.refresh();
        a.refresh();
        clock.addAndGet(SETTLE.toNanos());
        assertThat(a.refresh()).containsExactly("a", "b");
        b.leave();
        assertThat(a.refresh()).containsExactly("a");
        b.refresh();
        assertThat(a.refresh()).containsExactly("a");
        clock.addAndGet(SETTLE.toNanos());
        assertThat(a.refresh()).containsExactly("a");
        clock.addAndGet(TTL.toNanos() - SETTLE.toNanos() - 1);
        assertThat(a.refresh()).containsExactly("a");
        clock.addAndGet(1);
        assertThat(a.refresh()).containsExactly("a", "b");
    }

    @Test
    void aFlappingMemberStaysUncountedWhileEachStayIsShorterThanATimeToLive() {
        Membership a = joined("a");
        Membership b = member("b", TTL);
        b.refresh();
        a.refresh();
        clock.addAndGet(SETTLE.toNanos());
        assertThat(a.refresh()).containsExactly("a", "b");
        for (int flap = 0; flap < 5; flap++) {
            b.leave();
            assertThat(a.refresh()).containsExactly("a");
            clock.addAndGet(SETTLE.toNanos());
            b.refresh();
            for (int look = 0; look < 4; look++) {
                assertThat(a.refresh()).as("flap %d, look %d", flap, look).containsExactly("a");
                clock.addAndGet(SETTLE.toNanos());
            }
        }
    }

    @Test
    void aMemberBackLongAfterItLeftSettlesLikeANewOne() {
        Membership a = joined("a");
        Membership b = member("b", TTL);
        b.refresh();
        a.refresh();
        clock.addAndGet(SETTLE.toNanos());
        assertThat(a.refresh()).containsExactly("a", "b");
        b.leave();
        assertThat(a.refresh()).containsExactly("a");
        clock.addAndGet(Membership.REJOIN_MEMORY_TTLS * TTL.toNanos());
        assertThat(a.refresh()).containsExactly("a");
        b.refresh();
        assertThat(a.refresh()).containsExactly("a");
        clock.addAndGet(SETTLE.toNanos());
        assertThat(a.refresh()).containsExactly("a", "b");
    }

    private Membership joined(String id) {
        Membership member = member(id, Duration.ofSeconds(10));
        member.refresh();
        clock.addAndGet(JOIN.toNanos());
        member.refresh();
        assertThat(member.joined()).isTrue();
        return member;
    }

    @Test
    void aMemberThatStopsRefreshingLeavesAfterItsTimeToLive() {
        Membership a = member("a", Duration.ofSeconds(10));
        member("b", Duration.ofMillis(300)).refresh();
        assertThat(a.refresh()).containsExactly("a", "b");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> a.refresh().equals(java.util.List.of("a")));
        assertThat(redis.opsForZSet().score(Membership.membersKey(name), "b")).isNull();
    }

    @Test
    void theEntryIsScoredByItsExpiryInServerTime() {
        member("a", Duration.ofSeconds(10)).refresh();
        Double score = redis.opsForZSet().score(Membership.membersKey(name), "a");
        long serverMillis =
                redis.execute(
                        (RedisCallback<Long>) connection -> connection.serverCommands().time());
        assertThat(score).isNotNull();
        assertThat(score.longValue() - serverMillis).isBetween(8_000L, 10_000L);
        assertThat(redis.getExpire(Membership.membersKey(name))).isPositive();
    }
}
