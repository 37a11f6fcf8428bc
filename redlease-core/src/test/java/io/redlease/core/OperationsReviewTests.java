package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Hostile probes of leader discovery and preferred leadership, on paths the feature tests do not
 * take: an instance id reused across a crash and restart, a preferred follower stopped gracefully,
 * versions with long numbers.
 */
@ExtendWith(RedisExtension.class)
class OperationsReviewTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private StringRedisTemplate redis;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.server = server;
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    private Elector elector(String id, Duration ttl, AtomicInteger roundTrips) {
        return elector(redis, id, ttl, roundTrips, null);
    }

    private Elector elector(
            StringRedisTemplate redis,
            String id,
            Duration ttl,
            AtomicInteger roundTrips,
            List<long[]> events) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(ttl)
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(100))
                                .leaseAwareScheduling(false)
                                .instanceId(id)
                                .observer(
                                        new Observer() {
                                            @Override
                                            public void onRoundTrip(
                                                    Operation operation,
                                                    Duration duration,
                                                    boolean succeeded) {
                                                if (succeeded) {
                                                    roundTrips.incrementAndGet();
                                                }
                                            }

                                            @Override
                                            public void onElected(long token) {
                                                if (events != null) {
                                                    events.add(new long[] {System.nanoTime(), 1});
                                                }
                                            }

                                            @Override
                                            public void onSteppedDown(StepDownReason reason) {
                                                if (events != null) {
                                                    events.add(new long[] {System.nanoTime(), 0});
                                                }
                                            }
                                        })
                                .build());
        electors.add(elector);
        return elector;
    }

    private static void awaitRoundTrips(AtomicInteger roundTrips, int more) {
        int target = roundTrips.get() + more;
        await().until(() -> roundTrips.get() >= target);
    }

    /**
     * An instance that keeps its id across a crash and restart (a StatefulSet pod name, a host
     * name) takes its own leftover lease over as a new term. Until the new term publishes, the hash
     * still holds the crashed term's metadata under the same instance id: a reader must not be
     * shown it as the current leader's (the old URL, the old version, the old term).
     */
    @Test
    void aRestartedInstanceIsNeverShownWithItsCrashedTermsMetadata() {
        // What the crashed leader "node" left behind: its lease at term 5 and that term's metadata.
        redis.opsForValue().set(name + ":fence", "5");
        redis.opsForValue().set(name + ":fence:applied", "5");
        redis.opsForValue().set(name + ":leader", "node", Duration.ofSeconds(30));
        redis.opsForHash()
                .putAll(
                        LeaderInfoStore.infoKey(name),
                        Map.of(
                                "instance", "node",
                                "token", "5",
                                "url", "http://old-node.example:8080",
                                "version", "1.0.0"));
        redis.expire(LeaderInfoStore.infoKey(name), Duration.ofSeconds(30));

        // It restarts with the same id; the new build advertises nothing.
        Elector restarted = elector("node", Duration.ofSeconds(2), new AtomicInteger());
        restarted.start();
        await().until(restarted::isLeader);
        assertThat(restarted.fencer()).get().extracting(Fencer::token).isEqualTo(6L);

        Optional<LeaderInfo> seen =
                elector("reader", Duration.ofSeconds(2), new AtomicInteger()).leaderInfo();
        assertThat(seen).get().extracting(LeaderInfo::instanceId).isEqualTo("node");
        assertThat(seen.get().metadata())
                .as("the crashed term 5's metadata, shown for term 6")
                .isEmpty();
    }

    /**
     * A preferred follower that is stopped gracefully (scaled down, redeployed) no longer contends.
     * It must not keep a lower-ranked follower from taking the lease the leader released: a
     * graceful stop followed by a graceful hand-off should not leave the election without a leader
     * for a time to live.
     */
    @Test
    void aGracefullyStoppedPreferredFollowerDoesNotHoldTheFreeLeaseBack() {
        Duration ttl = Duration.ofSeconds(5);
        AtomicInteger n1Trips = new AtomicInteger();
        AtomicInteger n2Trips = new AtomicInteger();
        AtomicInteger oldTrips = new AtomicInteger();
        Elector n1 = elector("new-1", ttl, n1Trips);
        n1.prefer(Preference.version("2.0.0"), () -> true);
        Elector n2 = elector("new-2", ttl, n2Trips);
        n2.prefer(Preference.version("2.0.0"), () -> true);
        Elector old = elector("old", ttl, oldTrips);
        old.prefer(Preference.version("1.0.0"), () -> true);

        n1.start();
        await().until(n1::isLeader);
        n2.start();
        old.start();
        // Both followers have heartbeated (the heartbeat runs before the counting observer).
        awaitRoundTrips(n2Trips, 2);
        awaitRoundTrips(oldTrips, 2);
        assertThat(old.isLeader()).isFalse();

        n2.close();
        n1.close();

        // The old instance is the only one left: it should lead within a few acquire intervals,
        // not once new-2's entry has lapsed (a TTL after its last heartbeat).
        await().atMost(Duration.ofMillis(2500)).until(old::isLeader);
    }

    /**
     * Numbers compare as numbers, the documentation says: a build number or a timestamp of more
     * than 19 digits must not rank below a smaller one.
     */
    @Test
    void longNumbersInVersionsCompareAsNumbers() {
        assertThat(Preference.version("1.100000000000000000000"))
                .isGreaterThan(Preference.version("1.99999999999999999999"));
        assertThat(Preference.version("1.20261203140900000000"))
                .isGreaterThan(Preference.version("1.9999999999999999999"));
        assertThat(Preference.version("1.20261203140900000000"))
                .isGreaterThan(Preference.version("1.20261203140900000000-rc1"));
    }

    /**
     * A preferred candidate whose link to Redis is slow (round trips of 400 ms against an acquire
     * timeout of 100 ms and a TTL of 1 s: a congested or far-away network) can never start a term:
     * its acquires run past their bound. It must not keep the old instance from leading for more
     * than about one TTL. Its very first acquire, which may take up to the TTL, succeeds and
     * heartbeats it as live and ready; the leader then hands over to it, and its late acquires take
     * the free lease again and again for terms that never start.
     */
    @Test
    void aLaggingPreferredCandidateDoesNotLeaveTheElectionLeaderless() throws Exception {
        Duration ttl = Duration.ofSeconds(1);
        List<long[]> events = new CopyOnWriteArrayList<>();
        AtomicInteger oldTrips = new AtomicInteger();
        Elector old = elector(redis, "old", ttl, oldTrips, events);
        old.prefer(Preference.version("1.0.0"), () -> true);
        try (TcpProxy proxy = TcpProxy.start(server.host(), server.port())) {
            StringRedisTemplate slow = templates.withoutClientTimeouts(proxy.host(), proxy.port());
            slow.hasKey(name);
            Elector lagging = elector(slow, "new", ttl, new AtomicInteger(), events);
            lagging.prefer(Preference.version("2.0.0"), () -> true);
            old.start();
            await().until(old::isLeader);
            proxy.delay(Duration.ofMillis(200));
            long start = System.nanoTime();
            lagging.start();
            // About four TTLs of the old instance's round trips (renewals or acquires, 100 ms).
            awaitRoundTrips(oldTrips, 40);
            long end = System.nanoTime();
            lagging.close();

            long longest = 0;
            long downSince = -1;
            for (long[] event : events) {
                if (event[1] == 0 && downSince < 0) {
                    downSince = event[0];
                } else if (event[1] == 1 && downSince >= 0) {
                    longest = Math.max(longest, event[0] - downSince);
                    downSince = -1;
                }
            }
            if (downSince >= 0 && downSince < end) {
                longest = Math.max(longest, end - downSince);
            }
            assertThat(Duration.ofNanos(longest))
                    .as("longest time without a leader after %s ms", (end - start) / 1_000_000)
                    .isLessThanOrEqualTo(ttl.multipliedBy(3).dividedBy(2));
        }
    }

    /**
     * A preferred candidate that heartbeated as ready and then froze (SIGSTOP) is handed the lease
     * once; the old leader takes it back once the frozen entry lapses, about one TTL later, and
     * does not hand over again.
     */
    @Test
    void aFrozenPreferredCandidateHoldsTheLeaseBackForAboutOneTtlOnce() {
        Duration ttl = Duration.ofSeconds(1);
        List<long[]> events = new CopyOnWriteArrayList<>();
        AtomicInteger oldTrips = new AtomicInteger();
        Elector old = elector(redis, "old", ttl, oldTrips, events);
        old.prefer(Preference.version("1.0.0"), () -> true);
        old.start();
        await().until(old::isLeader);
        // What a candidate leaves when it heartbeats and is then stopped by SIGSTOP: a ready entry
        // that lives one lifetime (the TTL here) after its last heartbeat.
        Long now =
                redis.execute(
                        (RedisCallback<Long>)
                                connection ->
                                        connection.serverCommands().time(TimeUnit.MILLISECONDS));
        redis.opsForHash()
                .put(
                        Preference.candidatesKey(name),
                        "frozen",
                        (now + ttl.toMillis()) + "|1|" + Preference.version("2.0.0").rank());
        await().until(() -> events.size() >= 3);
        long[] down = events.get(1);
        long[] again = events.get(2);
        assertThat(down[1]).isZero();
        assertThat(again[1]).isOne();
        assertThat(Duration.ofNanos(again[0] - down[0])).isLessThanOrEqualTo(ttl.plusMillis(300));
        // Once: a further second of renewals, no further hand-over.
        awaitRoundTrips(oldTrips, 10);
        assertThat(events).hasSize(3);
        assertThat(old.isLeader()).isTrue();
    }

    /** Rank changes hand over once each; a change into a tie hands over nothing. */
    @Test
    void rankChangesHandOverOnceEachAndTiesNever() {
        Duration ttl = Duration.ofSeconds(1);
        List<long[]> aEvents = new CopyOnWriteArrayList<>();
        List<long[]> bEvents = new CopyOnWriteArrayList<>();
        AtomicInteger aTrips = new AtomicInteger();
        AtomicInteger bTrips = new AtomicInteger();
        Elector a = elector(redis, "a", ttl, aTrips, aEvents);
        a.prefer(Preference.version("2.0.0"), () -> true);
        Elector b = elector(redis, "b", ttl, bTrips, bEvents);
        b.prefer(Preference.version("2.0.0"), () -> true);
        a.start();
        await().until(a::isLeader);
        b.start();
        awaitRoundTrips(bTrips, 5);
        awaitRoundTrips(aTrips, 5);
        assertThat(a.isLeader()).isTrue();

        b.prefer(Preference.version("3.0.0"), () -> true);
        await().until(b::isLeader);
        a.prefer(Preference.version("3.0.0"), () -> true);
        awaitRoundTrips(aTrips, 10);
        awaitRoundTrips(bTrips, 10);
        assertThat(b.isLeader()).isTrue();
        assertThat(aEvents.stream().filter(e -> e[1] == 1)).hasSize(1);
        assertThat(bEvents.stream().filter(e -> e[1] == 1)).hasSize(1);
    }
}
