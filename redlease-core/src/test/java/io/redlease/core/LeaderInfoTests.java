package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Leader discovery: a leader's advertised metadata is kept beside its lease, with its lifetime, and
 * any instance reads the current holder's (never an earlier leader's).
 */
@ExtendWith(RedisExtension.class)
class LeaderInfoTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    /**
     * The time to live of {@link #elector}'s electors: long enough that a loaded machine does not
     * let a lease lapse between a test's steps (a 600 ms lease lapsed at load average 23).
     */
    private Duration ttl = Duration.ofSeconds(5);

    private Elector elector(String id, Observer... observers) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(name)
                        .ttl(ttl)
                        .renewInterval(Duration.ofMillis(100))
                        .acquireInterval(Duration.ofMillis(100))
                        .instanceId(id);
        for (Observer observer : observers) {
            builder.observer(observer);
        }
        Elector elector = new Elector(redis, builder.build());
        electors.add(elector);
        return elector;
    }

    private static LeaderMetadata metadata(String id) {
        return new LeaderMetadata(
                "http://" + id + ".example:8080", "1.2." + id.length(), Map.of("zone", "z-" + id));
    }

    @Test
    void followersReadTheAdvertisedMetadataBeforeTheLeadersOwnObserversRun() {
        ttl = Duration.ofMillis(600);
        // Reading needs no running elector: any instance (or tool) with the name can read.
        Elector follower = elector("follower");
        List<Optional<LeaderInfo>> seenOnElected = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder();
        Elector leader =
                elector(
                        "leader",
                        new Observer() {
                            @Override
                            public void onElected(long token) {
                                seenOnElected.add(follower.leaderInfo());
                            }
                        },
                        recorder);
        leader.advertise(metadata("leader"));
        assertThat(follower.leaderInfo()).isEmpty();
        long started = System.nanoTime();
        leader.start();
        recorder.await("elected", 1);
        await().until(() -> !seenOnElected.isEmpty());
        LeaderInfo info = seenOnElected.get(0).orElseThrow();
        assertThat(info.instanceId()).isEqualTo("leader");
        assertThat(info.url()).contains("http://leader.example:8080");
        assertThat(info.version()).contains("1.2.6");
        assertThat(info.attributes()).containsExactly(Map.entry("zone", "z-leader"));
        assertThat(info.token()).isEqualTo(leader.token().orElseThrow());
        assertThat(info.leaseTimeLeft()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(600));
        System.out.printf(
                "leader discovery: metadata readable %.1f ms after start%n",
                (System.nanoTime() - started) / 1e6);
    }

    @Test
    void theWinningAcquirePublishesTheMetadataWhileTheLeadersCallbacksAreHeldUp() {
        // The leader's callback lane runs nothing until released: no observer publishes for it.
        CountDownLatch lane = new CountDownLatch(1);
        ExecutorService callbacks = Executors.newSingleThreadExecutor();
        Elector leader =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofMillis(600))
                                .renewInterval(Duration.ofMillis(100))
                                .instanceId("leader")
                                .callbackExecutor(
                                        task ->
                                                callbacks.execute(
                                                        () -> {
                                                            awaitQuietly(lane);
                                                            task.run();
                                                        }))
                                .build());
        electors.add(leader);
        leader.advertise(metadata("leader"));
        Elector follower = elector("follower");
        leader.start();
        await().until(leader::isLeader);
        LeaderInfo info = follower.leaderInfo().orElseThrow();
        assertThat(info.instanceId()).isEqualTo("leader");
        assertThat(info.url()).contains("http://leader.example:8080");
        assertThat(info.token()).isEqualTo(leader.token().orElseThrow());
        lane.countDown();
        callbacks.shutdown();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void followersReadTheNewLeadersUrlAsSoonAsItHoldsTheLeaseAfterAHandOffAndACrash(
            RedisServer server) {
        Map<String, TcpProxy> proxies = new LinkedHashMap<>();
        Map<String, Elector> all = new LinkedHashMap<>();
        for (String id : List.of("a", "b", "c")) {
            TcpProxy proxy = TcpProxy.start(server);
            proxies.put(id, proxy);
            Elector elector =
                    new Elector(
                            templates.on(proxy.host(), proxy.port(), null, Duration.ofSeconds(2)),
                            ElectorConfig.builder(name)
                                    .ttl(Duration.ofMillis(600))
                                    .renewInterval(Duration.ofMillis(100))
                                    .acquireInterval(Duration.ofMillis(100))
                                    .instanceId(id)
                                    .build());
            electors.add(elector);
            elector.advertise(LeaderMetadata.url("http://" + id + ":8080"));
            all.put(id, elector);
        }
        Elector reader = elector("reader");
        try {
            all.values().forEach(Elector::start);
            String first = awaitHolderOtherThan(reader, "");
            // A hand-off, then a crash (the leader's Redis link goes silent and its lease lapses):
            // the first read that names the new holder already carries its URL.
            all.get(first).close();
            String second = awaitHolderOtherThan(reader, first);
            proxies.get(second).blackhole();
            awaitHolderOtherThan(reader, second);
        } finally {
            proxies.values().forEach(TcpProxy::close);
        }
    }

    /** Polls until a read names a holder other than {@code previous}; that read has its URL. */
    private static String awaitHolderOtherThan(Elector reader, String previous) {
        LeaderInfo info =
                await().atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(1))
                        .until(
                                () -> reader.leaderInfo().orElse(null),
                                read -> read != null && !read.instanceId().equals(previous));
        assertThat(info.url()).contains("http://" + info.instanceId() + ":8080");
        return info.instanceId();
    }

    @Test
    void theMetadataLivesAsLongAsTheLeaseAndSurvivesRenewals() {
        ttl = Duration.ofMillis(600);
        AtomicInteger renewals = new AtomicInteger();
        Recorder recorder = new Recorder();
        Elector leader =
                elector(
                        "leader",
                        recorder,
                        new Observer() {
                            @Override
                            public void onRoundTrip(
                                    Operation operation, Duration duration, boolean succeeded) {
                                if (operation == Operation.RENEW && succeeded) {
                                    renewals.incrementAndGet();
                                }
                            }
                        });
        leader.advertise(metadata("leader"));
        leader.start();
        recorder.await("elected", 1);
        // Past several lease lifetimes, renewed all along: still there, never outliving the lease.
        await().until(() -> renewals.get() >= 20);
        String infoKey = name + ":leader:info";
        assertThat(redis.hasKey(infoKey)).isTrue();
        Long infoTtl = redis.getExpire(infoKey, TimeUnit.MILLISECONDS);
        assertThat(infoTtl).isPositive().isLessThanOrEqualTo(600L);
        leader.close();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
        await().until(() -> !redis.hasKey(infoKey));
    }

    @Test
    void anEarlierLeadersMetadataIsNeverAttributedToTheHolder() {
        Recorder first = new Recorder();
        Elector a = elector("a", first);
        a.advertise(metadata("a"));
        a.start();
        first.await("elected", 1);
        assertThat(a.leaderInfo().orElseThrow().url()).contains("http://a.example:8080");
        a.close();
        // A holder that published nothing, such as a Go instance, with a stale hash beside it.
        redis.opsForHash().putAll(name + ":leader:info", Map.of("instance", "a", "url", "x"));
        Recorder second = new Recorder();
        Elector b = elector("b", second);
        b.start();
        second.await("elected", 1);
        LeaderInfo info = a.leaderInfo().orElseThrow();
        assertThat(info.instanceId()).isEqualTo("b");
        assertThat(info.metadata()).isEmpty();
        assertThat(info.url()).isEmpty();
        assertThat(info.token()).isZero();
    }

    @Test
    void advertisingWhileLeadingPublishesAtOnceAndNullWithdraws() {
        Recorder recorder = new Recorder();
        Elector leader = elector("leader", recorder);
        leader.start();
        recorder.await("elected", 1);
        assertThat(leader.leaderInfo().orElseThrow().metadata()).isEmpty();
        assertThat(redis.hasKey(name + ":leader:info")).isFalse();
        leader.advertise(LeaderMetadata.url("http://leader:1"));
        assertThat(leader.leaderInfo().orElseThrow().url()).contains("http://leader:1");
        assertThat(leader.advertised()).contains(LeaderMetadata.url("http://leader:1"));
        leader.advertise(null);
        assertThat(leader.leaderInfo().orElseThrow().metadata()).isEmpty();
        assertThat(leader.advertised()).isEmpty();
        assertThat(redis.hasKey(name + ":leader:info")).isFalse();
    }

    @Test
    void theLeaseKeysKeepTheGoLibrarysFormat() {
        Recorder recorder = new Recorder();
        Elector leader = elector("leader", recorder);
        leader.advertise(metadata("leader"));
        leader.start();
        recorder.await("elected", 1);
        assertThat(redis.opsForValue().get(name + ":leader")).isEqualTo("leader");
        assertThat(redis.opsForValue().get(name + ":fence"))
                .isEqualTo(Long.toString(leader.token().orElseThrow()));
        assertThat(redis.type(name + ":leader:info").code()).isEqualTo("hash");
    }

    @Test
    void badAttributesAreRefused() {
        Map<String, String> withEmptyKey = Map.of("", "x");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new LeaderMetadata(null, null, withEmptyKey))
                .withMessageContaining("attribute keys");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new LeaderMetadata(null, null, null))
                .withMessage("redlease: attributes must not be null");
    }
}
