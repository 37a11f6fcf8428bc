package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Observer callbacks run on their election's own lane: slow ones never touch a lease. */
@ExtendWith(RedisExtension.class)
class LaneTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final CountDownLatch release = new CountDownLatch(1);

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        electors.forEach(Elector::stopAsync);
        electors.forEach(Elector::close);
        templates.close();
    }

    private Elector elector(String election, Duration ttl, Observer observer) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(election)
                                .ttl(ttl)
                                .releaseNotifications(false)
                                .observer(observer)
                                .build());
        electors.add(elector);
        return elector;
    }

    @Test
    void slowObserversOfOneElectionDoNotCostAnotherElectionItsLease() {
        Observer blocking =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        waitFor(release, Duration.ofMillis(2500));
                    }
                };
        for (int i = 0; i < 8; i++) {
            elector(name + ":slow-" + i, Duration.ofSeconds(5), blocking).start();
        }
        Recorder healthy = new Recorder();
        Elector elector = elector(name + ":healthy", Duration.ofSeconds(1), healthy);
        elector.start();
        healthy.await("elected", 1);
        // Three TTLs while eight callbacks block: the lease is there at every look.
        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(4))
                .pollInterval(Duration.ofMillis(25))
                .until(() -> elector.isLeader() && redis.hasKey(name + ":healthy:leader"));
        assertThat(healthy.count("steppedDown")).isZero();
        assertThat(healthy.count("elected")).isEqualTo(1);
    }

    @Test
    void aBlockedCallbackDelaysOnlyItsOwnElectionsLaterCallbacks() {
        CountDownLatch blockedStarted = new CountDownLatch(1);
        Observer blocking =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        blockedStarted.countDown();
                        waitFor(release, Duration.ofSeconds(30));
                    }
                };
        Recorder behindIt = new Recorder();
        Elector blockedWithRecorder =
                elector(
                        name + ":blocked",
                        Duration.ofSeconds(2),
                        Observer.composite(List.of(blocking, behindIt)));
        blockedWithRecorder.start();
        assertThat(waitFor(blockedStarted, Duration.ofSeconds(10))).isTrue();
        Recorder other = new Recorder();
        elector(name + ":other", Duration.ofSeconds(2), other).start();
        other.await("elected", 1);
        blockedWithRecorder.resign();
        // The other election is served; the blocked one's later callbacks wait in order.
        assertThat(behindIt.count("elected")).isZero();
        release.countDown();
        behindIt.await("elected", 1);
        behindIt.await("steppedDown", 1);
        assertThat(behindIt.kindsIgnoringAcquireErrors()).startsWith("elected", "steppedDown");
    }

    @Test
    void aFullLaneDropsNewCallbacksAndCountsThem() {
        CountDownLatch started = new CountDownLatch(1);
        List<Integer> ran = new CopyOnWriteArrayList<>();
        Lane lane = new Lane(name, command -> new Thread(command).start());
        lane.submit(
                "blocking",
                () -> {
                    started.countDown();
                    waitFor(release, Duration.ofSeconds(30));
                });
        assertThat(waitFor(started, Duration.ofSeconds(10))).isTrue();
        for (int i = 0; i < Lane.MAX_PENDING + 5; i++) {
            int n = i;
            lane.submit("callback " + n, () -> ran.add(n));
        }
        assertThat(lane.dropped()).isEqualTo(5);
        release.countDown();
        await().until(() -> ran.size() == Lane.MAX_PENDING);
        assertThat(ran).isSorted();
    }

    @Test
    void callbacksOfOneLaneNeverOverlap() {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Integer> order = new CopyOnWriteArrayList<>();
        Lane lane = new Lane(name, ElectorRuntime.callbacks());
        for (int i = 0; i < 200; i++) {
            int n = i;
            lane.submit(
                    "callback " + n,
                    () -> {
                        if (running.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        order.add(n);
                        running.decrementAndGet();
                    });
        }
        await().until(() -> order.size() == 200);
        assertThat(overlaps).hasValue(0);
        assertThat(order).isSorted();
    }

    private static boolean waitFor(CountDownLatch latch, Duration timeout) {
        try {
            return latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
