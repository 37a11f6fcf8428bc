package io.redlease.boot.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The health contributor over a real Redis that goes away and comes back. */
@ExtendWith(RedisExtension.class)
class RedleaseHealthIndicatorTests {

    @Test
    void upWhileReachingRedisDownWhileNot(@Dedicated RedisServer server) {
        LettuceConnectionFactory factory = factory(server);
        Elector elector =
                new Elector(
                        new StringRedisTemplate(factory),
                        ElectorConfig.builder("health-" + System.nanoTime())
                                .ttl(Duration.ofMillis(500))
                                .instanceId("a")
                                .build());
        RedleaseHealthIndicator indicator = new RedleaseHealthIndicator(Elections.of(elector));
        try {
            Health stopped = indicator.health();
            assertThat(stopped.getStatus()).isEqualTo(Status.UP);
            assertThat(details(stopped)).containsEntry("role", "stopped");

            elector.start();
            await().until(elector::isLeader);
            Health leading = indicator.health();
            assertThat(leading.getStatus()).isEqualTo(Status.UP);
            assertThat(details(leading))
                    .containsEntry("role", "leader")
                    .containsEntry("instanceId", "a")
                    .containsEntry("token", elector.token().getAsLong());

            server.kill();
            await().until(() -> indicator.health().getStatus().equals(Status.DOWN));
            assertThat(details(indicator.health())).containsKey("error");

            server.restart();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> indicator.health().getStatus().equals(Status.UP));
        } finally {
            elector.close();
            factory.destroy();
        }
    }

    /**
     * Until its first outcome an election is neither leader nor follower: a follower that says so
     * hears the next release, and one still connecting (to a paused Redis here) does not yet.
     */
    @Test
    void anElectionIsStartingUntilItsFirstOutcome(@Dedicated RedisServer server) {
        LettuceConnectionFactory factory = factory(server);
        Elector elector =
                new Elector(
                        new StringRedisTemplate(factory),
                        ElectorConfig.builder("health-" + System.nanoTime())
                                .ttl(Duration.ofMillis(500))
                                .connectTimeout(Duration.ofMinutes(10))
                                .instanceId("a")
                                .build());
        RedleaseHealthIndicator indicator = new RedleaseHealthIndicator(Elections.of(elector));
        server.pause();
        try {
            elector.start();
            assertThat(elector.firstOutcome()).isNotDone();
            assertThat(details(indicator.health())).containsEntry("role", "starting");

            server.resume();
            await().atMost(Duration.ofSeconds(30)).until(elector::isLeader);
            assertThat(details(indicator.health())).containsEntry("role", "leader");
        } finally {
            server.resume();
            elector.close();
            factory.destroy();
        }
    }

    @Test
    void notificationsAreOffWithTheCauseUntilTheSubscriptionIsBack(@Dedicated RedisServer server) {
        server.stop();
        LettuceConnectionFactory factory = factory(server);
        Elector elector =
                new Elector(
                        new StringRedisTemplate(factory),
                        ElectorConfig.builder("health-" + System.nanoTime())
                                .ttl(Duration.ofSeconds(2))
                                .instanceId("a")
                                .build());
        RedleaseHealthIndicator indicator = new RedleaseHealthIndicator(Elections.of(elector));
        try {
            assertThat(details(indicator.health()))
                    .containsEntry("notifications", "off")
                    .containsEntry("notificationsOff", "the elector is not running");
            elector.start();
            await().atMost(Duration.ofSeconds(30))
                    .until(
                            () ->
                                    String.valueOf(
                                                    details(indicator.health())
                                                            .get("notificationsOff"))
                                            .contains("cannot subscribe"));
            assertThat(details(indicator.health()))
                    .containsEntry("notifications", "off")
                    .hasEntrySatisfying(
                            "notificationsOff",
                            why ->
                                    assertThat((String) why)
                                            .contains(String.valueOf(server.port())));
            server.restart();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> "on".equals(details(indicator.health()).get("notifications")));
            assertThat(details(indicator.health())).doesNotContainKey("notificationsOff");
        } finally {
            elector.close();
            factory.destroy();
        }
    }

    @Test
    void notificationsSwitchedOffSayWhy(RedisServer server) {
        LettuceConnectionFactory factory = factory(server);
        Elector elector =
                new Elector(
                        new StringRedisTemplate(factory),
                        ElectorConfig.builder("health-" + System.nanoTime())
                                .instanceId("a")
                                .releaseNotifications(false)
                                .build());
        RedleaseHealthIndicator indicator = new RedleaseHealthIndicator(Elections.of(elector));
        try {
            elector.start();
            await().until(elector::isLeader);
            assertThat(details(indicator.health()))
                    .containsEntry("notifications", "off")
                    .hasEntrySatisfying(
                            "notificationsOff",
                            why -> assertThat((String) why).contains("releaseNotifications"));
        } finally {
            elector.close();
            factory.destroy();
        }
    }

    @Test
    void credentialsInErrorMessagesAreMasked() {
        String text =
                RedleaseHealthIndicator.describe(
                        new IllegalStateException(
                                "Unable to connect to redis://app:s3cret@cache:6379 and rediss://:pw@other"));
        assertThat(text)
                .doesNotContain("s3cret")
                .doesNotContain(":pw@")
                .contains("redis://***@cache:6379")
                .contains("rediss://***@other");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> details(Health health) {
        return (Map<String, Object>) health.getDetails().get(Elections.DEFAULT);
    }

    /** A started connection factory of its own to the server. */
    private static LettuceConnectionFactory factory(RedisServer server) {
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }
}
