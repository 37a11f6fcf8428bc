package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.RedisConnectionFailureException;

/**
 * A follower that has just joined reports itself a follower only once its release subscription is
 * in place (or has failed), and looks at the lease again when the subscription lands: a release
 * announced before that is not missed until its next look, an acquire interval later.
 *
 * <p>The follower's subscription is held back with {@link ReleaseNotifications#beforeSubscribe};
 * followers look at the lease every 60 s here, so only the subscription's landing can elect one
 * within the waits below.
 */
@ExtendWith(RedisExtension.class)
class FollowerSubscriptionTests {

    private static final Duration POLL = Duration.ofSeconds(60);

    private static final Duration TTL = Duration.ofSeconds(90);

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final CountDownLatch held = new CountDownLatch(1);

    private final CountDownLatch land = new CountDownLatch(1);

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        ReleaseNotifications.beforeSubscribe = null;
        land.countDown();
        electors.forEach(Elector::close);
        templates.close();
    }

    /** Each elector has a connection factory, so a subscription connection, of its own. */
    private Elector elector(String id, Observer observer) {
        Elector elector =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(POLL)
                                .connectTimeout(POLL)
                                .instanceId(id)
                                .observer(observer)
                                .build());
        electors.add(elector);
        return elector;
    }

    private Elector leader() {
        Recorder recorder = new Recorder();
        Elector leader = elector("a", recorder);
        leader.start();
        recorder.await("elected", 1);
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(() -> leader.notificationsOff().isEmpty());
        return leader;
    }

    /** Records, for each onFollower, why notifications were off then (empty: they were heard). */
    private static final class FollowerReports implements Observer {

        final AtomicReference<@Nullable Elector> elector = new AtomicReference<>();

        final List<Optional<String>> notificationsOffAtReport = new CopyOnWriteArrayList<>();

        @Override
        public void onFollower(@Nullable String holder) {
            Elector self = elector.get();
            notificationsOffAtReport.add(
                    self == null ? Optional.of("no elector") : self.notificationsOff());
        }
    }

    @Test
    void aJoiningFollowerReportsItselfOnceSubscribedAndTakesOverAReleaseMadeBeforeThat() {
        Elector a = leader();
        ReleaseNotifications.beforeSubscribe =
                (channel, instanceId) -> {
                    if ("b".equals(instanceId)) {
                        held.countDown();
                        try {
                            land.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    }
                };
        FollowerReports reports = new FollowerReports();
        Elector b = elector("b", reports);
        reports.elector.set(b);
        b.start();
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(() -> held.getCount() == 0 && b.leaseHeld());

        // b has lost its first attempt and its subscription is held back: it is not a follower
        // that hears releases yet, so it does not say it is one.
        assertThat(b.notificationsOff()).contains("subscribing");
        assertThat(b.firstOutcome()).as("first outcome before the subscription").isNotDone();
        assertThat(reports.notificationsOffAtReport).isEmpty();

        // The release is announced before b listens; b hears nothing of it.
        a.stop();
        land.countDown();

        // The subscription lands: b reports itself and looks at the lease at once.
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10))).until(b::isLeader);
        assertThat(b.firstOutcome()).isCompletedWithValue(false);
        assertThat(reports.notificationsOffAtReport).containsExactly(Optional.empty());
    }

    @Test
    void aFailedSubscriptionDoesNotHoldTheFollowerBack() {
        leader();
        ReleaseNotifications.beforeSubscribe =
                (channel, instanceId) -> {
                    if ("b".equals(instanceId)) {
                        throw new RedisConnectionFailureException("subscription refused in a test");
                    }
                };
        FollowerReports reports = new FollowerReports();
        Elector b = elector("b", reports);
        reports.elector.set(b);
        b.start();

        // Reported at the failure, not at the connect timeout (60 s here); b polls meanwhile.
        assertThat(b.firstOutcome())
                .succeedsWithin(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .isEqualTo(false);
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(() -> reports.notificationsOffAtReport.size() == 1);
        assertThat(reports.notificationsOffAtReport.get(0))
                .hasValueSatisfying(reason -> assertThat(reason).contains("cannot subscribe"));
    }

    /**
     * The connect timeout bounds the hold from the run's start, not from the first lost attempt: a
     * follower whose connection took most of it is reported once the rest has passed, so its first
     * outcome comes within the connect timeout and the acquire, as {@link Elector#firstOutcome()}
     * says, and an application's startup, which waits that long, sees it.
     */
    @Test
    void theHoldEndsAtTheConnectTimeoutCountedFromTheStart() {
        server.command("SET", name + ":leader", "someone-else", "PX", "600000");
        ReleaseNotifications.beforeSubscribe =
                (channel, instanceId) -> {
                    if ("b".equals(instanceId)) {
                        try {
                            land.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    }
                };
        Duration connect = TestTimeScale.scaled(Duration.ofSeconds(4));
        Elector b =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(POLL)
                                .connectTimeout(connect)
                                .instanceId("b")
                                .build());
        electors.add(b);
        server.pause();
        long start = System.nanoTime();
        AtomicLong reported = new AtomicLong();
        try {
            b.start();
            b.firstOutcome().thenRun(() -> reported.set(System.nanoTime() - start));
            // The connection waits on the paused server for three quarters of its timeout.
            await().atMost(connect.multipliedBy(2))
                    .until(() -> System.nanoTime() - start >= connect.toNanos() * 3 / 4);
        } finally {
            server.resume();
        }

        assertThat(b.firstOutcome())
                .succeedsWithin(TestTimeScale.scaled(Duration.ofSeconds(30)))
                .isEqualTo(false);
        assertThat(b.notificationsOff()).contains("subscribing");
        // Held for a whole connect timeout after the lost attempt, it would come after 7/4 of it.
        assertThat(Duration.ofNanos(reported.get()))
                .isLessThan(connect.multipliedBy(3).dividedBy(2));
    }
}
