package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Graceful hand-off through release notifications: a follower told of a release acquires at once;
 * without a notification it still gets there by polling.
 */
@ExtendWith(RedisExtension.class)
class ReleaseNotificationTests {

    /** Followers poll every 4 s here, so anything much faster came from a notification. */
    private static final Duration POLL = Duration.ofSeconds(4);

    private static final Duration TTL = Duration.ofSeconds(6);

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

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
        templates.close();
    }

    private Elector elector(String id, boolean notifications, Recorder recorder) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(POLL)
                                .instanceId(id)
                                .releaseNotifications(notifications)
                                .observer(recorder)
                                .build());
        electors.add(elector);
        return elector;
    }

    /** Starts a leader, then a follower, and returns the leader once the follower has lost. */
    private Elector leaderThenFollower(Recorder leader, Recorder follower, boolean notify) {
        Elector a = elector("a", true, leader);
        a.start();
        leader.await("elected", 1);
        elector("b", notify, follower).start();
        follower.await("follower", 1);
        return a;
    }

    /** Starts a leader and a follower and waits until the follower is subscribed. */
    private Elector leaderWithFollower(Recorder leader, Recorder follower, boolean notify) {
        Elector a = leaderThenFollower(leader, follower, notify);
        if (notify) {
            // Both electors share one template, so one subscription connection.
            await().until(() -> subscribers() >= 1);
        }
        return a;
    }

    private long subscribers() {
        return subscribers(LeaseProtocol.releaseChannel(name));
    }

    private long subscribers(String channel) {
        List<?> reply = (List<?>) server.command("PUBSUB", "NUMSUB", channel);
        return (Long) reply.get(1);
    }

    @Test
    void gracefulHandOffWakesTheFollowerAtOnce() {
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        Elector a = leaderWithFollower(leader, follower, true);
        long released = System.nanoTime();
        a.stop();
        Recorder.Event elected = follower.await("elected", 1);
        assertThat(Duration.ofNanos(elected.nanos() - released)).isLessThan(POLL.dividedBy(2));
        assertThat(elected.token()).isGreaterThan(leader.electedTokens().get(0));
    }

    @Test
    void aStoppingLeaderKeepsItsSubscriptionUntilAfterItsRelease() {
        // Unsubscribing alongside the release competed with it (and, on a shared host, with the
        // successor) for the CPU: a stopping leader closes its subscription a moment after its
        // release instead. The hook holds the release; the stop's first step has run once the
        // run's steps are idle.
        CountDownLatch hookStarted = new CountDownLatch(1);
        CompletableFuture<Void> hookDone = new CompletableFuture<>();
        Elector leader =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .instanceId("a")
                                .drainTimeout(Duration.ofSeconds(10))
                                .beforeRelease(
                                        term -> {
                                            hookStarted.countDown();
                                            return hookDone;
                                        })
                                .build());
        electors.add(leader);
        leader.start();
        await().until(leader::isLeader);
        await().until(() -> subscribers() == 1);
        CompletableFuture<Void> stopped = leader.stopAsync();
        await().until(() -> hookStarted.getCount() == 0 && leader.stepsIdle());
        assertThat(leader.notificationsOff()).isEmpty();
        assertThat(subscribers()).isEqualTo(1);
        hookDone.complete(null);
        await().until(stopped::isDone);
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        // The stop completes once the subscription is closed: an application may shut its Redis
        // client down next.
        assertThat(subscribers()).isZero();
        assertThat(leader.notificationsOff()).contains("the elector is not running");
    }

    @Test
    void aStoppingLeaderWithoutASubscriptionDoesNotWaitToCloseOne() throws Exception {
        // The settle after a release is for the subscription's close; with release notifications
        // off there is none, and the stop returns once the lease is released. An hour's settle:
        // a stop that waited for it would not return.
        ElectorRuntime runtime = new ElectorRuntime(1, TimeUnit.HOURS.toNanos(1));
        Recorder recorder = new Recorder();
        Elector leader =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .instanceId("a")
                                .releaseNotifications(false)
                                .observer(recorder)
                                .build(),
                        runtime);
        electors.add(leader);
        leader.start();
        recorder.await("elected", 1);
        leader.stopAsync().get(10, TimeUnit.SECONDS);
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        assertThat(recorder.count("steppedDown")).isEqualTo(1);
    }

    @Test
    void aStopAfterTheRunEndedWaitsForItsSubscriptionToClose() throws Exception {
        Elector leader =
                new Elector(redis, ElectorConfig.builder(name).ttl(TTL).instanceId("a").build());
        electors.add(leader);
        leader.start();
        await().until(leader::isLeader);
        await().until(() -> subscribers() == 1);
        // Every subscribing thread held: the unsubscribe waits, the run can still finish.
        CountDownLatch held = new CountDownLatch(Subscription.SUBSCRIBING_THREADS);
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < Subscription.SUBSCRIBING_THREADS; i++) {
            Subscription.later(
                    () -> {
                        held.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    });
        }
        try {
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Void> first = leader.stopAsync();
            await().until(() -> !leader.isRunning());
            CompletableFuture<Void> second = leader.stopAsync();
            assertThat(second).isNotDone();
            assertThat(first).isNotDone();
        } finally {
            release.countDown();
        }
        await().until(() -> subscribers() == 0);
    }

    @Test
    void aGracefulHandOffNeedsNoLoopThread() throws Exception {
        // The stop's release, the follower's wake-up, its acquire and that acquire's reply are
        // handled on the threads that bring them while the runs' loops are idle, without a hop to
        // a loop thread: the hand-off completes while every loop thread of both runs is held by
        // other work.
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        CountDownLatch renewed = new CountDownLatch(1);
        Observer renewals =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        if (operation == Operation.RENEW) {
                            renewed.countDown();
                        }
                    }
                };
        Elector a =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                // A long lease: its renewals, every 10 s, stay out of the few
                                // seconds held below (a
                                // renewal's reply queued for the loop thread would send the stop
                                // there too).
                                .ttl(Duration.ofSeconds(30))
                                .instanceId("a")
                                .observer(leader)
                                .observer(renewals)
                                .build());
        electors.add(a);
        a.start();
        leader.await("elected", 1);
        Elector b = elector("b", true, follower);
        b.start();
        // The leader's first renewal was answered and the follower sleeps until its next look,
        // subscribed: whatever their loops had to do is queued ahead of the blockers below.
        assertThat(renewed.await(10, TimeUnit.SECONDS)).isTrue();
        await().until(b::idleFollower);
        // The steps the last replies handed to the loops have run too (a renewal's reply and its
        // report are separate steps, and either may still wait when the observer hears of it).
        await().atMost(Duration.ofSeconds(10)).until(() -> a.stepsIdle() && b.stepsIdle());
        try (HeldLoops loops = HeldLoops.of(a, b)) {
            CompletableFuture<Void> stopped = a.stopAsync();
            Recorder.Event elected = follower.await("elected", 1);
            assertThat(loops.holding()).isTrue();
            assertThat(elected.token()).isGreaterThan(leader.electedTokens().get(0));
            loops.close();
            // The release's reply is handled on the loop thread, once it is free.
            leader.await("steppedDown", 1);
            stopped.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aReleaseRightAfterAFollowerJoinsIsNotMissed(TestInfo info) {
        // The leader stops as soon as the follower has lost its first attempt, often before the
        // follower's subscription is in place; the follower tries again once it is subscribed.
        for (int round = 0; round < 10; round++) {
            name = Names.unique(info) + "-" + round;
            Recorder leader = new Recorder();
            Recorder follower = new Recorder();
            Elector a = leaderThenFollower(leader, follower, true);
            long released = System.nanoTime();
            a.stop();
            Recorder.Event elected = follower.await("elected", 1);
            assertThat(Duration.ofNanos(elected.nanos() - released))
                    .as("round %d", round)
                    .isLessThan(POLL.dividedBy(2));
            electors.forEach(Elector::stop);
        }
    }

    @Test
    void withoutNotificationsTheFollowerWaitsForItsPoll() {
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        Elector a = leaderWithFollower(leader, follower, false);
        long followerSince = follower.events("follower").get(0).nanos();
        a.stop();
        Recorder.Event elected = follower.await("elected", 1, Duration.ofSeconds(10));
        // The first poll after becoming a follower comes no sooner than 90 % of the interval.
        assertThat(Duration.ofNanos(elected.nanos() - followerSince))
                .isGreaterThanOrEqualTo(POLL.multipliedBy(9).dividedBy(10));
    }

    /** Holds the lease as another instance would, then starts a subscribed follower. */
    private Recorder followerOfAnotherHolder() {
        redis.opsForValue().set(name + ":leader", "holder", TTL);
        Recorder follower = new Recorder();
        Elector b = elector("b", true, follower);
        b.start();
        follower.await("follower", 1);
        await().until(b::idleFollower);
        return follower;
    }

    @Test
    void aLostNotificationCostsAtMostTheHoldersRemainingLease() {
        Recorder follower = followerOfAnotherHolder();
        long followerSince = follower.events("follower").get(0).nanos();
        // The lease vanishes without an announcement (expired, deleted by an operator). A
        // subscribed follower looks again when the holder's lease would have lapsed.
        redis.delete(name + ":leader");
        Recorder.Event elected = follower.await("elected", 1, TTL.plusSeconds(5));
        assertThat(Duration.ofNanos(elected.nanos() - followerSince))
                .isGreaterThanOrEqualTo(POLL.multipliedBy(9).dividedBy(10))
                .isLessThanOrEqualTo(TTL.plusSeconds(1));
    }

    @Test
    void aNotificationForAnotherElectionOrFromItselfDoesNotWakeAFollower() {
        Recorder follower = followerOfAnotherHolder();
        redis.convertAndSend(LeaseProtocol.releaseChannel(name + "-other"), "x");
        redis.convertAndSend(LeaseProtocol.releaseChannel(name), "b");
        redis.delete(name + ":leader");
        org.awaitility.Awaitility.await()
                .during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(2))
                .until(() -> follower.count("elected") == 0);
        // The holder's own announcement does wake it.
        long announced = System.nanoTime();
        redis.convertAndSend(LeaseProtocol.releaseChannel(name), "holder");
        Recorder.Event elected = follower.await("elected", 1);
        assertThat(Duration.ofNanos(elected.nanos() - announced)).isLessThan(POLL.dividedBy(2));
    }

    @Test
    void electionsOfOneConnectionFactoryShareOneSubscriptionConnection() {
        Recorder leader = new Recorder();
        leaderWithFollower(leader, new Recorder(), true);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String other = name + "-" + i;
            names.add(other);
            Recorder recorder = new Recorder();
            Elector elector =
                    new Elector(
                            redis,
                            ElectorConfig.builder(other)
                                    .instanceId("f")
                                    .observer(recorder)
                                    .build());
            electors.add(elector);
            elector.start();
            recorder.await("elected", 1);
        }
        for (String other : names) {
            org.awaitility.Awaitility.await()
                    .until(() -> subscribers(LeaseProtocol.releaseChannel(other)) == 1);
        }
        String clients = (String) server.command("CLIENT", "LIST");
        long subscribedConnections =
                clients.lines().filter(line -> !line.contains(" sub=0 ")).count();
        assertThat(subscribedConnections).isEqualTo(1);
    }

    @Test
    void registrationsMadeTogetherJoinTheSubscriptionInPlaceWithoutANewConnection() {
        LettuceConnectionFactory factory =
                (LettuceConnectionFactory) templates.on(server).getConnectionFactory();
        ReleaseNotifications.Registration first = registration(factory, name + "-0");
        first.subscribe();
        await().until(() -> subscribers(LeaseProtocol.releaseChannel(name + "-0")) == 1);
        Set<String> connection = subscriptionConnections();
        assertThat(connection).hasSize(1);
        // Registered together (a newcomer's partitions campaigned for at once): while the others
        // have not subscribed yet, they say nothing about the connection in place.
        List<ReleaseNotifications.Registration> burst = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            burst.add(registration(factory, name + "-" + i));
        }
        burst.get(0).subscribe();
        assertThat(subscriptionConnections()).as("the same connection").isEqualTo(connection);
        burst.get(1).subscribe();
        burst.get(2).subscribe();
        for (int i = 0; i <= 3; i++) {
            String channel = LeaseProtocol.releaseChannel(name + "-" + i);
            await().until(() -> subscribers(channel) == 1);
        }
        assertThat(subscriptionConnections()).isEqualTo(connection);
        // The threads that added them end once idle: thousands of elections keep none for it.
        await().atMost(Duration.ofSeconds(20))
                .until(() -> idleThreads("redlease-subscription-add") == 0);
        burst.forEach(ReleaseNotifications.Registration::close);
        first.close();
    }

    /** How many threads of a pool, by name, wait idle for a task. */
    private static long idleThreads(String prefix) {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(entry -> entry.getKey().getName().startsWith(prefix))
                .filter(
                        entry ->
                                Arrays.stream(entry.getValue())
                                        .anyMatch(frame -> frame.getMethodName().equals("getTask")))
                .count();
    }

    static ReleaseNotifications.Registration registration(
            RedisConnectionFactory factory, String election) {
        return ReleaseNotifications.register(
                factory,
                LeaseProtocol.releaseChannel(election),
                "a",
                new ReleaseNotifications.Registration.Listener() {
                    @Override
                    public void released() {}

                    @Override
                    public void subscribed() {}

                    @Override
                    public void interrupted(Throwable cause) {}
                });
    }

    /** The ids of the server's connections subscribed to a channel. */
    private Set<String> subscriptionConnections() {
        String clients = (String) server.command("CLIENT", "LIST");
        return clients.lines()
                .filter(line -> !line.contains(" sub=0 "))
                .map(line -> line.substring(0, line.indexOf(' ')))
                .collect(Collectors.toSet());
    }

    @Test
    void theSubscriptionEndsWithTheLastElector() {
        Recorder leader = new Recorder();
        leaderWithFollower(leader, new Recorder(), true);
        electors.forEach(Elector::close);
        await().until(() -> subscribers() == 0);
    }

    @Test
    void closingASubscriptionAfterTheConnectionFactoryWasDestroyedLogsNothing() throws Exception {
        LettuceConnectionFactory factory =
                (LettuceConnectionFactory) templates.on(server).getConnectionFactory();
        String channel = LeaseProtocol.releaseChannel(name);
        ReleaseNotifications.Registration subscription = registration(factory, name);
        subscription.subscribe();
        await().until(() -> subscribers(channel) == 1);
        factory.destroy();
        Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        try {
            subscription.close();
        } finally {
            root.detachAppender(logged);
        }
        assertThat(logged.list)
                .filteredOn(event -> event.getLevel().isGreaterOrEqual(Level.WARN))
                .isEmpty();
        assertThat(ReleaseNotifications.stopped(factory)).isTrue();
    }
}
