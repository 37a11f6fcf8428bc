package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Hostile review of the issue 22 changes (branch ops-live): leader metadata written by the winning
 * acquire, Elector.leaseHeld(), and round trips of re-awaited renewals, on paths the shipped tests
 * do not take. Each test names what it attacks; all run against a real redis-server.
 */
@ExtendWith(RedisExtension.class)
class OpsLiveReviewTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final List<TcpProxy> proxies = new ArrayList<>();

    private StringRedisTemplate redis;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        proxies.forEach(TcpProxy::close);
        templates.close();
    }

    private ElectorConfig.Builder config(String id, Observer... observers) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(name)
                        .ttl(Duration.ofMillis(600))
                        .renewInterval(Duration.ofMillis(100))
                        .acquireInterval(Duration.ofMillis(100))
                        .instanceId(id);
        for (Observer observer : observers) {
            builder.observer(observer);
        }
        return builder;
    }

    private Elector elector(StringRedisTemplate template, ElectorConfig.Builder builder) {
        Elector elector = new Elector(template, builder.build());
        electors.add(elector);
        return elector;
    }

    private TcpProxy proxy() {
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        return proxy;
    }

    /** A client with no timeout of its own to speak of (a minute): only the elector's apply. */
    private StringRedisTemplate through(TcpProxy proxy) {
        return templates.on(proxy.host(), proxy.port(), null, Duration.ofMinutes(1));
    }

    /** The acquire a Go instance sends: the plain script, three keys, two arguments, no info. */
    private List<Object> goAcquire(String id) {
        return redis.execute(
                Scripts.ACQUIRE,
                List.of(name + ":leader", name + ":fence", name + ":fence:applied"),
                id,
                "600");
    }

    private Elector javaLeaderBehindABlackholedLink(String id, LeaderMetadata metadata) {
        TcpProxy link = proxy();
        Recorder recorder = new Recorder();
        Elector leader = elector(through(link), config(id, recorder));
        leader.advertise(metadata);
        leader.start();
        recorder.await("elected", 1);
        // Its renewals stop reaching Redis; what it wrote stays until the lease is taken over.
        link.blackhole();
        return leader;
    }

    // Attack 1: a Go-style acquire takes over from a Java leader whose info hash is still there.

    @Test
    void holdsGoTakeoverFromAJavaLeaderIsNotReportedWithTheJavaLeadersMetadata() {
        javaLeaderBehindABlackholedLink("java", LeaderMetadata.url("http://java:8080"));
        assertThat(redis.hasKey(name + ":leader:info")).isTrue();
        // The Java lease lapses before the info would (simulated by deleting only the lease).
        redis.delete(name + ":leader");
        List<Object> reply = goAcquire("go");
        assertThat(LeaseProtocol.asLong(reply.get(0))).isPositive();
        assertThat(redis.opsForHash().get(name + ":leader:info", "instance")).isEqualTo("java");
        Elector reader = elector(redis, config("reader"));
        LeaderInfo info = reader.leaderInfo().orElseThrow();
        assertThat(info.instanceId()).isEqualTo("go");
        assertThat(info.url()).isEmpty();
        assertThat(info.token()).isZero();
    }

    @Test
    void holdsGoStyleReElectionOfTheSameInstanceIdDoesNotReportTheOlderTermsMetadata() {
        javaLeaderBehindABlackholedLink("same", LeaderMetadata.url("http://same-old:8080"));
        String oldToken = (String) redis.opsForHash().get(name + ":leader:info", "token");
        // The same id (a restart with a fixed id, a Go build of the same service) takes its own
        // lease over as a new term and sends no info: the hash names the id but an older token.
        List<Object> reply = goAcquire("same");
        long newToken = LeaseProtocol.asLong(reply.get(0));
        assertThat(newToken).isGreaterThan(Long.parseLong(oldToken));
        assertThat(redis.opsForHash().get(name + ":leader:info", "instance")).isEqualTo("same");
        Elector reader = elector(redis, config("reader"));
        LeaderInfo info = reader.leaderInfo().orElseThrow();
        assertThat(info.instanceId()).isEqualTo("same");
        assertThat(info.url()).isEmpty();
        assertThat(info.token()).isZero();
    }

    // Attack 2: metadata with many fields and odd values, changed mid-term, over a long term.

    @Test
    void holdsOddMetadataChangedMidTermIsReadExactlyAndOutlivesManyTtls() {
        Map<String, String> attributes = new LinkedHashMap<>();
        for (int i = 0; i < 60; i++) {
            attributes.put("k" + i, i % 3 == 0 ? "" : "v|" + i + "\n" + "ünï-路径-" + i);
        }
        attributes.put("instance", "not-the-holder");
        attributes.put("token", "999999");
        attributes.put("url", "http://spoof");
        LeaderMetadata first = new LeaderMetadata("http://ünïcode.example/路径", "", attributes);
        LeaderMetadata second = new LeaderMetadata(null, "2.0", Map.of("zone", "z-2"));
        AtomicInteger renewals = new AtomicInteger();
        Recorder recorder = new Recorder();
        Elector leader =
                elector(
                        redis,
                        config(
                                "leader",
                                recorder,
                                new Observer() {
                                    @Override
                                    public void onRoundTrip(
                                            Operation operation,
                                            Duration duration,
                                            boolean succeeded) {
                                        if (operation == Operation.RENEW && succeeded) {
                                            renewals.incrementAndGet();
                                        }
                                    }
                                }));
        Elector reader = elector(redis, config("reader"));
        leader.advertise(first);
        leader.start();
        recorder.await("elected", 1);
        LeaderInfo read = reader.leaderInfo().orElseThrow();
        assertThat(read.instanceId()).isEqualTo("leader");
        assertThat(read.token()).isEqualTo(leader.token().orElseThrow());
        assertThat(read.metadata()).contains(first);
        // A long term: 60 renewals of 100 ms with a 600 ms TTL is ten lease lifetimes.
        await().atMost(Duration.ofSeconds(30)).until(() -> renewals.get() >= 60);
        assertThat(reader.leaderInfo().orElseThrow().metadata()).contains(first);
        leader.advertise(second);
        assertThat(reader.leaderInfo().orElseThrow().metadata()).contains(second);
        int mark = renewals.get();
        await().atMost(Duration.ofSeconds(30)).until(() -> renewals.get() >= mark + 30);
        assertThat(reader.leaderInfo().orElseThrow().metadata()).contains(second);
    }

    // Attack 3: leaseHeld on a follower whose link is blackholed (the connection stays open, the
    // client's own timeout is a minute): the acquire timeout alone must end the grace.

    @Test
    void holdsFollowerOnABlackholedLinkStopsReportingHeldAfterTheGrace() {
        Recorder leaderEvents = new Recorder();
        elector(redis, config("leader", leaderEvents)).start();
        leaderEvents.await("elected", 1);
        TcpProxy link = proxy();
        Recorder recorder = new Recorder();
        Elector follower = elector(through(link), config("follower", recorder));
        follower.start();
        recorder.await("follower", 1);
        assertThat(follower.leaseHeld()).isTrue();
        link.blackhole();
        // TTL 600 ms plus one acquire timeout: well within 10 s, not a minute.
        await().atMost(Duration.ofSeconds(10)).until(() -> !follower.leaseHeld());
        assertThat(follower.isLeader()).isFalse();
        link.pass();
        await().atMost(Duration.ofSeconds(10)).until(follower::leaseHeld);
    }

    // Attack 4: a preference-gated follower (its acquires run the gate script) while a
    // higher-ranked instance leads.

    @Test
    void holdsPreferenceGatedFollowerReportsHeldWhileAHigherRankedInstanceLeads() {
        Recorder highEvents = new Recorder();
        Elector high = elector(redis, config("high", highEvents));
        high.prefer(Preference.priority(10), () -> true);
        high.start();
        highEvents.await("elected", 1);
        Recorder lowEvents = new Recorder();
        Elector low = elector(redis, config("low", lowEvents));
        low.prefer(Preference.priority(1), () -> true);
        low.start();
        lowEvents.await("follower", 1);
        assertThat(low.leaseHeld()).isTrue();
        assertThat(low.isLeader()).isFalse();
    }

    // Attack 5: stop/start of a follower.

    @Test
    void holdsStoppedFollowerReportsNotHeldAndARestartedOneHeldAgain() {
        Recorder leaderEvents = new Recorder();
        elector(redis, config("leader", leaderEvents)).start();
        leaderEvents.await("elected", 1);
        Recorder recorder = new Recorder();
        Elector follower = elector(redis, config("follower", recorder));
        follower.start();
        recorder.await("follower", 1);
        assertThat(follower.leaseHeld()).isTrue();
        follower.stop();
        assertThat(follower.leaseHeld()).isFalse();
        follower.start();
        recorder.await("follower", 2);
        assertThat(follower.leaseHeld()).isTrue();
    }

    // Attack 6: round trips of a renewal that never returns (blackholed leader link), and of the
    // acquires: none negative, none longer than the round trip can have lasted.

    @Test
    void holdsARenewalThatNeverReturnsIsReportedAsFailedAndNoDurationIsNegative() {
        List<Object[]> trips = new CopyOnWriteArrayList<>();
        TcpProxy link = proxy();
        Recorder recorder = new Recorder();
        Observer roundTrips =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        trips.add(new Object[] {operation, duration, succeeded});
                    }
                };
        Elector leader = elector(through(link), config("leader", recorder, roundTrips));
        long started = System.nanoTime();
        leader.start();
        recorder.await("elected", 1);
        await().until(
                        () ->
                                trips.stream().filter(t -> t[0] == Observer.Operation.RENEW).count()
                                        >= 5);
        link.blackhole();
        recorder.await("steppedDown", 1);
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                trips.stream()
                                        .anyMatch(
                                                t ->
                                                        t[0] == Observer.Operation.RENEW
                                                                && !(Boolean) t[2]));
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);

        for (Object[] trip : trips) {
            Duration duration = (Duration) trip[1];
            assertThat(duration)
                    .as("%s", trip[0])
                    .isGreaterThanOrEqualTo(Duration.ZERO)
                    .isLessThan(elapsed);
        }
    }

    // Attack 7 (was a defect): a renewal that never returns is re-awaited on every renew tick; each
    // re-await used to report its own failed round trip counted from the one send (0.1 s, 0.2 s,
    // ... 0.5 s here). One send is now one report: when its reply comes or its term gives it up.

    @Test
    void oneRenewalThatNeverReturnsIsReportedAsOneFailedRoundTrip() {
        // Each failed renewal report, as the instant its request was sent (report time - duration).
        List<Long> failedRenewalSends = new CopyOnWriteArrayList<>();
        TcpProxy link = proxy();
        Recorder recorder = new Recorder();
        Observer roundTrips =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        if (operation == Operation.RENEW && !succeeded) {
                            failedRenewalSends.add(System.nanoTime() - duration.toNanos());
                        }
                    }
                };
        Elector leader = elector(through(link), config("leader", recorder, roundTrips));
        leader.start();
        recorder.await("elected", 1);
        link.blackhole();
        recorder.await("steppedDown", 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> !failedRenewalSends.isEmpty());
        List<Long> sends = new ArrayList<>(failedRenewalSends);
        // Renewals are sent at least one renew interval (100 ms) apart; reports whose requests
        // were sent within 20 ms of each other are reports of the same renewal.
        for (int i = 1; i < sends.size(); i++) {
            assertThat(Math.abs(sends.get(i) - sends.get(i - 1)))
                    .as(
                            "failed renewal reports %d and %d come from one send (%d reports in"
                                    + " all)",
                            i - 1, i, sends.size())
                    .isGreaterThan(Duration.ofMillis(20).toNanos());
        }
    }

    // Attack 8 (was a defect): metadata withdrawn (advertise(null)) while the winning acquire is in
    // flight. The acquire already carried the old metadata; the term's start now removes it, so
    // followers do not read the withdrawn URL.

    @Test
    void metadataWithdrawnWhileTheWinningAcquireIsInFlightIsRemovedWhenTheTermBegins() {
        TcpProxy link = proxy();
        link.delay(Duration.ofMillis(500));
        Recorder recorder = new Recorder();
        Elector leader =
                elector(
                        through(link),
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(10))
                                .renewInterval(Duration.ofSeconds(1))
                                // The acquire timeout is min(acquire interval, TTL - renew
                                // interval): 3 s, above the delayed round trip of about 1 s.
                                .acquireInterval(Duration.ofSeconds(3))
                                .instanceId("leader")
                                .observer(recorder));
        Elector reader = elector(redis, config("reader"));
        leader.advertise(LeaderMetadata.url("http://withdrawn:8080"));
        leader.start();
        // The acquire has reached Redis (it wrote the info) and its reply is still on its way.
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> redis.hasKey(name + ":leader:info"));
        assertThat(leader.isLeader()).isFalse();
        leader.advertise(null);
        recorder.await("elected", 1);
        assertThat(leader.advertised()).isEmpty();
        // Once the leader's callbacks have run (a round trip through the same delayed link).
        link.pass();
        await().atMost(Duration.ofSeconds(5))
                .until(
                        () -> leader.leaderInfo().map(LeaderInfo::instanceId).orElse(""),
                        "leader"::equals);
        assertThat(reader.leaderInfo().orElseThrow().url())
                .as("a follower reads the metadata the leader withdrew")
                .isEmpty();
    }

    // Attack 9 (was a defect): stop/start. A run now forgets what the last run's acquire saw, so a
    // restarted follower does not report the lease held before it has looked in this run, nor
    // while it cannot look at all: here the lease was released while it was stopped and its link
    // is dead.

    @Test
    void aRestartedFollowerDoesNotReportTheLastRunsLeaseBeforeItLooks() {
        Recorder leaderEvents = new Recorder();
        Elector leader =
                elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(10))
                                .renewInterval(Duration.ofMillis(500))
                                .acquireInterval(Duration.ofSeconds(2))
                                .instanceId("leader")
                                .observer(leaderEvents));
        leader.start();
        leaderEvents.await("elected", 1);
        TcpProxy link = proxy();
        Recorder recorder = new Recorder();
        Elector follower =
                elector(
                        through(link),
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(10))
                                .renewInterval(Duration.ofMillis(500))
                                .acquireInterval(Duration.ofSeconds(2))
                                .instanceId("follower")
                                .observer(recorder));
        follower.start();
        recorder.await("follower", 1);
        assertThat(follower.leaseHeld()).isTrue();
        follower.stop();
        assertThat(follower.leaseHeld()).isFalse();
        link.blackhole();
        leader.close();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
        follower.start();
        // Its first acquire cannot come back (blackholed) before its 2 s timeout.
        assertThat(follower.leaseHeld())
                .as("held reported from the previous run; the lease is free and unseen")
                .isFalse();
    }
}
