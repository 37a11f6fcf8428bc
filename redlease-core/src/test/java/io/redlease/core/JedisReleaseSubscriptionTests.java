package io.redlease.core;

import static io.redlease.core.ReleaseNotificationTests.registration;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * The shared release subscription over a blocking client (Jedis), whose container waits for
 * confirmations on the subscribing thread, through a proxy that delays, holds back and cuts the
 * connection. Apart from {@link ReleaseNotificationTests} so the RESP2 leg of the compatibility
 * matrix, which runs those, does not run these (they speak to Redis through Jedis).
 */
@ExtendWith(RedisExtension.class)
class JedisReleaseSubscriptionTests {

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
    }

    private long subscribers(String channel) {
        List<?> reply = (List<?>) server.command("PUBSUB", "NUMSUB", channel);
        return (Long) reply.get(1);
    }

    @Test
    void aJoinWhoseConfirmationNeverComesDoesNotHoldUpTheSubscriptionsRestore() throws Exception {
        // A blocking client (Jedis) waits for the confirmation of channels added in place without
        // a bound: here the connection is lost with the SUBSCRIBE unanswered, so none comes. The
        // join must still end (failing), and the lost subscription be restored afterwards, with
        // the burst's other registration.
        try (TcpProxy proxy = TcpProxy.start(server)) {
            JedisConnectionFactory factory = jedis(proxy, Duration.ofSeconds(2));
            List<ReleaseNotifications.Registration> all = new ArrayList<>();
            ExecutorService joins = Executors.newSingleThreadExecutor();
            try {
                ReleaseNotifications.Registration first = registration(factory, name + "-0");
                all.add(first);
                first.subscribe();
                await().until(() -> subscribers(LeaseProtocol.releaseChannel(name + "-0")) == 1);
                // Registered together: one joins, the other has not subscribed yet.
                ReleaseNotifications.Registration joining = registration(factory, name + "-1");
                ReleaseNotifications.Registration waiting = registration(factory, name + "-2");
                all.add(joining);
                all.add(waiting);
                proxy.blackhole();
                Future<?> join = joins.submit(joining::subscribe);
                await().until(() -> proxy.heldChunks() > 0);
                proxy.cut();
                proxy.pass();
                await("the join ends").atMost(Duration.ofSeconds(30)).until(join::isDone);
                await("the lost connection is told")
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> !first.subscribed());
                await("every channel subscribed again")
                        .atMost(Duration.ofSeconds(30))
                        .until(
                                () -> {
                                    for (ReleaseNotifications.Registration registration : all) {
                                        try {
                                            registration.subscribe();
                                        } catch (RuntimeException retried) {
                                            return false;
                                        }
                                    }
                                    for (int i = 0; i <= 2; i++) {
                                        if (subscribers(
                                                        LeaseProtocol.releaseChannel(
                                                                name + "-" + i))
                                                != 1) {
                                            return false;
                                        }
                                    }
                                    return all.stream()
                                            .allMatch(
                                                    ReleaseNotifications.Registration::subscribed);
                                });
            } finally {
                joins.shutdownNow();
                Thread closing =
                        new Thread(
                                () -> {
                                    all.forEach(ReleaseNotifications.Registration::close);
                                    factory.destroy();
                                });
                closing.setDaemon(true);
                closing.start();
                closing.join(10_000);
            }
        }
    }

    @Test
    void aSubscriptionThatFailedToBeBuiltDoesNotConfirmARegistrationLate() throws Exception {
        // On a blocking client (Jedis) the container waits 2 s for a new subscription and fails,
        // while the subscription itself goes on and is confirmed later, just before the failed
        // one is closed. That confirmation must not make the registration look subscribed: it is
        // not, and it would never try again (its follower polling without saying so).
        try (TcpProxy proxy = TcpProxy.start(server)) {
            JedisConnectionFactory factory = jedis(proxy, Duration.ofSeconds(10));
            String channel = LeaseProtocol.releaseChannel(name);
            ReleaseNotifications.Registration registration = registration(factory, name);
            try {
                registration.subscribe();
                await().until(() -> subscribers(channel) == 1);
                // A round trip takes 3 s from now on; the connection is lost.
                proxy.delay(Duration.ofMillis(1500));
                proxy.cut();
                await().atMost(Duration.ofSeconds(30)).until(() -> !registration.subscribed());
                assertThatThrownBy(registration::subscribe)
                        .as("the new subscription is not in place within the container's wait");
                // It takes effect on the server, is confirmed and closed, which the server sees
                // once everything sent before is delivered.
                await().atMost(Duration.ofSeconds(30)).until(() -> subscribers(channel) == 1);
                await().atMost(Duration.ofSeconds(30)).until(() -> subscribers(channel) == 0);
                await().atMost(Duration.ofSeconds(30)).until(() -> proxy.heldChunks() == 0);
                proxy.pass();
                await("subscribed again")
                        .atMost(Duration.ofSeconds(30))
                        .until(
                                () -> {
                                    try {
                                        registration.subscribe();
                                    } catch (RuntimeException retried) {
                                        return false;
                                    }
                                    return registration.subscribed() && subscribers(channel) == 1;
                                });
            } finally {
                Thread closing =
                        new Thread(
                                () -> {
                                    registration.close();
                                    factory.destroy();
                                });
                closing.setDaemon(true);
                closing.start();
                closing.join(10_000);
            }
        }
    }

    /** A Jedis factory (a blocking subscription) connecting through a proxy. */
    private static JedisConnectionFactory jedis(TcpProxy proxy, Duration timeout) {
        JedisConnectionFactory factory =
                new JedisConnectionFactory(
                        new RedisStandaloneConfiguration(proxy.host(), proxy.port()),
                        JedisClientConfiguration.builder()
                                .connectTimeout(timeout)
                                .readTimeout(timeout)
                                .build());
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
