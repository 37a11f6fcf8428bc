package io.redlease.core;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A fenced call ends in one of three outcomes (applied, refused, unknown), also when the leader's
 * connection factory has been stopped (an application shutting down while leader-only work still
 * writes: Boot stops the factory as a lifecycle bean); an error reply of an eval body itself is no
 * outcome of the fence and is thrown as the client reports it.
 */
@ExtendWith(RedisExtension.class)
class FenceOutcomeEdgeTests {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final Templates templates = new Templates();

    private Elector elector;

    private String name;

    private StringRedisTemplate redis;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        name = Names.unique(info);
        redis = templates.on(server);
        elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .renewInterval(TTL.dividedBy(3))
                                .acquireInterval(Duration.ofMillis(100))
                                .build());
        elector.start();
        await().atMost(scaled(Duration.ofSeconds(10))).until(elector::isLeader);
    }

    @AfterEach
    void tearDown() {
        elector.close();
        templates.close();
    }

    private static String describe(Object outcome) {
        return outcome instanceof Throwable t
                ? t.getClass().getName() + ": " + t.getMessage()
                : String.valueOf(outcome);
    }

    @Test
    void aBlockingWriteOverAStoppedFactoryEndsInOneOfTheThreeOutcomes() {
        Term term = elector.term().orElseThrow();
        assertThat(term.fencer().set(name + ":k", "before")).isTrue();
        ((LettuceConnectionFactory) redis.getConnectionFactory()).stop();
        Object outcome;
        try {
            outcome = term.fencer().set(name + ":k", "after");
        } catch (Throwable ex) {
            outcome = ex;
        }
        assertThat(outcome)
                .as("outcome: %s", describe(outcome))
                .isInstanceOf(FenceOutcomeUnknownException.class);
    }

    @Test
    void aReactiveWriteOverAStoppedFactoryEndsInOneOfTheThreeOutcomes() {
        Term term = elector.term().orElseThrow();
        ReactiveFencer fencer = term.reactiveFencer();
        assertThat(fencer.set(name + ":k", "before").block(scaled(Duration.ofSeconds(10))))
                .isTrue();
        ((LettuceConnectionFactory) redis.getConnectionFactory()).stop();
        Object outcome;
        try {
            outcome = fencer.set(name + ":k", "after").block(scaled(Duration.ofSeconds(40)));
        } catch (Throwable ex) {
            outcome = ex;
        }
        assertThat(outcome)
                .as("outcome: %s", describe(outcome))
                .isInstanceOf(FenceOutcomeUnknownException.class);
    }

    /**
     * An error reply of the script itself (here WRONGTYPE from an eval body) is not an outcome of
     * the fence: it is thrown as the client reports it (Spring's {@code RedisSystemException}
     * around Lettuce's {@code RedisCommandExecutionException}), as documented.
     */
    @Test
    void anErrorReplyOfAnEvalBodyIsThrownAsTheClientReportsIt() {
        Term term = elector.term().orElseThrow();
        redis.opsForHash().put(name + ":h", "f", "v");
        Throwable failure =
                catchThrowable(
                        () ->
                                term.fencer()
                                        .eval(
                                                "redis.call('INCR', KEYS[2])",
                                                java.util.List.of(name + ":h")));
        assertThat(failure)
                .as("outcome: %s", describe(failure))
                .isExactlyInstanceOf(org.springframework.data.redis.RedisSystemException.class)
                .hasCauseInstanceOf(io.lettuce.core.RedisCommandExecutionException.class)
                .hasStackTraceContaining("WRONGTYPE");
    }
}
