package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The release subscription comes back whatever took it away: Redis down when the follower started,
 * a Redis restart, a subscription connection killed by the server. Each test then shows the
 * mechanism, not a speed: the follower's own next look at the lease is minutes away (its acquire
 * interval is {@link #SLOW_POLL}), so being elected within the test's wait means a release
 * notification woke it.
 */
@ExtendWith(RedisExtension.class)
class ReleaseSubscriptionRecoveryTests {

    /** The follower's acquire interval: it never looks at the lease on its own during a test. */
    private static final Duration SLOW_POLL = Duration.ofMinutes(5);

    private static final Duration SLOW_TTL = Duration.ofMinutes(10);

    /** How long a test waits for a subscription or a woken follower. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private String name;

    @BeforeEach
    void setUp(TestInfo info) {
        name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    /** A follower that looks at the lease on its own only every {@link #SLOW_POLL}. */
    private Elector slowFollower(StringRedisTemplate redis, Recorder recorder) {
        return elector(redis, "b", SLOW_TTL, SLOW_POLL, recorder);
    }

    /**
     * A leader whose lease outlives the test unless it releases it; it does not subscribe itself,
     * so the channel's subscribers are the follower's.
     */
    private Elector leader(StringRedisTemplate redis, Recorder recorder) {
        return elector(redis, "a", SLOW_TTL, Duration.ofMinutes(1), recorder, false);
    }

    private Elector elector(
            StringRedisTemplate redis,
            String id,
            Duration ttl,
            Duration acquireInterval,
            Recorder recorder) {
        return elector(redis, id, ttl, acquireInterval, recorder, true);
    }

    private Elector elector(
            StringRedisTemplate redis,
            String id,
            Duration ttl,
            Duration acquireInterval,
            Recorder recorder,
            boolean notifications) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(ttl)
                                .renewInterval(Duration.ofSeconds(1))
                                .acquireInterval(acquireInterval)
                                .instanceId(id)
                                .releaseNotifications(notifications)
                                .observer(recorder)
                                .build());
        electors.add(elector);
        return elector;
    }

    private long subscribers(RedisServer server) {
        List<?> reply =
                (List<?>) server.command("PUBSUB", "NUMSUB", LeaseProtocol.releaseChannel(name));
        return (Long) reply.get(1);
    }

    private void awaitSubscribers(RedisServer server, long n, String when) {
        Awaitility.await(n + " subscriber(s) of the release channel " + when)
                .atMost(WAIT)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> subscribers(server) == n);
    }

    /**
     * Stops the leader gracefully and waits for the follower to be elected: as its own next look is
     * minutes away, only the release notification can wake it in time.
     */
    private void handOffWakes(Elector leader, Recorder follower) {
        leader.stop();
        follower.await("elected", 1, WAIT);
    }

    @Test
    void aFollowerStartedWhileRedisWasDownSubscribesWhenRedisIsBack(@Dedicated RedisServer server) {
        server.stop();
        Recorder follower = new Recorder();
        Elector b = slowFollower(templates.on(server), follower);
        ListAppender<ILoggingEvent> logged = capture();
        try {
            b.start();
            follower.await("error", 1);
            Awaitility.await("the failed subscription is logged")
                    .atMost(WAIT)
                    .until(() -> warnings(logged).size() >= 1);
        } finally {
            release(logged);
        }
        assertThat(b.notificationsOff())
                .hasValueSatisfying(why -> assertThat(why).contains("cannot subscribe"));
        server.restart();
        awaitSubscribers(server, 1, "after Redis came back");
        Awaitility.await().atMost(WAIT).until(() -> b.notificationsOff().isEmpty());
        Recorder leading = new Recorder();
        Elector a = leader(templates.on(server), leading);
        a.start();
        leading.await("elected", 1);
        handOffWakes(a, follower);
    }

    @Test
    void aFailedSubscriptionAtStartIsOneWarningWithItsCause(@Dedicated RedisServer server) {
        server.stop();
        Recorder follower = new Recorder();
        Elector b = slowFollower(templates.on(server), follower);
        ListAppender<ILoggingEvent> logged = capture();
        try {
            b.start();
            follower.await("error", 1);
            Awaitility.await("the failed subscription is logged")
                    .atMost(WAIT)
                    .until(() -> warnings(logged).size() >= 1);
            // Retries while Redis stays down say nothing more above DEBUG.
            Awaitility.await()
                    .pollDelay(Duration.ofSeconds(3))
                    .atMost(Duration.ofSeconds(4))
                    .until(() -> true);
        } finally {
            release(logged);
        }
        List<ILoggingEvent> warnings = warnings(logged);
        assertThat(warnings).as("WARN and above while Redis was down: %s", warnings).hasSize(1);
        ILoggingEvent warning = warnings.get(0);
        assertThat(warning.getLevel()).isEqualTo(Level.WARN);
        assertThat(warning.getFormattedMessage())
                .contains(name)
                .contains("release notifications")
                .contains(String.valueOf(server.port()));
        assertThat(warning.getThrowableProxy()).as("no stack trace at WARN").isNull();
        assertThat(warning.getFormattedMessage().lines()).hasSize(1);
    }

    @Test
    void aKilledSubscriptionConnectionIsRestored(RedisServer server) {
        Recorder leading = new Recorder();
        Elector a = leader(templates.on(server), leading);
        a.start();
        leading.await("elected", 1);
        Recorder follower = new Recorder();
        slowFollower(templates.on(server), follower).start();
        follower.await("follower", 1);
        awaitSubscribers(server, 1, "before the kill");
        server.command("CLIENT", "KILL", "TYPE", "pubsub");
        awaitSubscribers(server, 1, "after the kill");
        handOffWakes(a, follower);
    }

    @Test
    void aKilledSubscriptionConnectionIsRestoredWithoutTheClientsReconnect(RedisServer server) {
        Recorder leading = new Recorder();
        Elector a = leader(templates.on(server), leading);
        a.start();
        leading.await("elected", 1);
        Recorder follower = new Recorder();
        slowFollower(templates.withoutAutoReconnect(server), follower).start();
        follower.await("follower", 1);
        awaitSubscribers(server, 1, "before the kill");
        server.command("CLIENT", "KILL", "TYPE", "pubsub");
        awaitSubscribers(server, 1, "after the kill");
        handOffWakes(a, follower);
    }

    @Test
    void theSubscriptionIsRestoredAfterARedisRestart(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer server) {
        Recorder leading = new Recorder();
        Elector a = leader(templates.on(server), leading);
        a.start();
        leading.await("elected", 1);
        Recorder follower = new Recorder();
        slowFollower(templates.on(server), follower).start();
        follower.await("follower", 1);
        awaitSubscribers(server, 1, "before the restart");
        server.restart();
        awaitSubscribers(server, 1, "after the restart");
        assertThat(a.isLeader()).as("the leader kept its lease through the restart").isTrue();
        handOffWakes(a, follower);
    }

    private static ListAppender<ILoggingEvent> capture() {
        Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        return logged;
    }

    private static void release(ListAppender<ILoggingEvent> logged) {
        ((Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).detachAppender(logged);
    }

    private static List<ILoggingEvent> warnings(ListAppender<ILoggingEvent> logged) {
        return new ArrayList<>(logged.list)
                .stream().filter(event -> event.getLevel().isGreaterOrEqual(Level.WARN)).toList();
    }
}
