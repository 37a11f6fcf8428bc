package io.redlease.docs.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.core.Elections;
import io.redlease.core.FenceRefusedException;
import io.redlease.core.NotLeaderException;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.test.StepVerifier;

/** The reactive examples of docs/reactive-and-async.md. */
@ExtendWith(RedisExtension.class)
class LedgerTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    @Test
    void theLeadersSubscriptionWritesInItsTermAndAFollowersFails(RedisServer server) {
        String name = "{ledger-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app = start(server, name)) {
            RedleaseTester tester =
                    RedleaseTester.of(
                            app.getBean(Elections.class),
                            app.getBean(RedisConnectionFactory.class));
            long token = tester.awaitLeadership().token();
            Ledger ledger = app.getBean(Ledger.class);
            StepVerifier.create(ledger.settle()).expectNext(token).verifyComplete();
            assertThat(app.getBean(StringRedisTemplate.class).hasKey(ledger.settledKey())).isTrue();

            try (RedleaseTester.ForeignLease other = tester.stealLease()) {
                tester.awaitFollower();
                StepVerifier.create(ledger.settle())
                        .expectError(NotLeaderException.class)
                        .verify(Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void aSubscriptionWhoseWriteIsRefusedFailsAndWritesNothing(RedisServer server) {
        String name = "{ledger-refused-" + System.nanoTime() + "}";
        // A long TTL keeps the renewal that would end the superseded term out of the test's way.
        try (ConfigurableApplicationContext app = start(server, name, "--redlease.ttl=60s")) {
            RedleaseTester tester =
                    RedleaseTester.of(
                            app.getBean(Elections.class),
                            app.getBean(RedisConnectionFactory.class));
            long token = tester.awaitLeadership().token();
            Ledger ledger = app.getBean(Ledger.class);
            tester.startNewerTerm(); // another instance won a newer term
            StepVerifier.create(ledger.settle())
                    .expectErrorSatisfies(
                            error ->
                                    assertThat(error)
                                            .isInstanceOf(FenceRefusedException.class)
                                            .hasMessageContaining("with token " + token))
                    .verify(Duration.ofSeconds(10));
            assertThat(app.getBean(StringRedisTemplate.class).hasKey(ledger.settledKey()))
                    .isFalse();
        }
    }

    @Test
    void theReactiveSlotJobReportsEachSlotOnce(RedisServer server) {
        String name = "{ledger-slots-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app = start(server, name)) {
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            Ledger ledger = app.getBean(Ledger.class);
            await().atMost(FIRST_ELECTION)
                    .until(() -> redis.opsForList().size(ledger.slotsKey()) >= 3);
            assertThat(redis.opsForList().range(ledger.slotsKey(), 0, -1)).doesNotHaveDuplicates();
        }
    }

    private static ConfigurableApplicationContext start(
            RedisServer server, String name, String... more) {
        List<String> args = new ArrayList<>(List.of(more));
        args.addAll(
                List.of(
                        "--spring.main.web-application-type=none",
                        "--spring.data.redis.url=" + server.url(),
                        "--redlease.name=" + name,
                        "--ledger.report.cron=* * * * * *"));
        return SpringApplication.run(ReactiveApplication.class, args.toArray(String[]::new));
    }
}
