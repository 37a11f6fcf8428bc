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
 * Review of issue 29 item 3 (hostile): a fenced call ends in one of three outcomes (applied,
 * refused, unknown). Probed here: a write made by a leader whose connection factory has been
 * stopped (an application shutting down while leader-only work still writes: Boot stops the factory
 * as a lifecycle bean).
 */
@ExtendWith(RedisExtension.class)
class Review29OutcomeProbeTests {

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
        System.out.println(
                "review29: blocking write over a stopped factory -> " + describe(outcome));
        assertThat(outcome)
                .as("outcome: %s", describe(outcome))
                .satisfiesAnyOf(
                        o -> assertThat(o).isInstanceOf(Boolean.class),
                        o -> assertThat(o).isInstanceOf(FenceOutcomeUnknownException.class));
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
        System.out.println(
                "review29: reactive write over a stopped factory -> " + describe(outcome));
        assertThat(outcome)
                .as("outcome: %s", describe(outcome))
                .satisfiesAnyOf(
                        o -> assertThat(o).isInstanceOf(Boolean.class),
                        o -> assertThat(o).isInstanceOf(FenceOutcomeUnknownException.class));
    }

    /**
     * An error reply of Redis (here WRONGTYPE from an eval body) is documented as thrown "as the
     * client reported it"; the promise also says no fenced call ends in a bare
     * RedisSystemException. Which one does Lettuce give?
     */
    @Test
    void anErrorReplyOfAnEvalBodyIsNotABareRedisSystemException() {
        Term term = elector.term().orElseThrow();
        redis.opsForHash().put(name + ":h", "f", "v");
        Throwable failure =
                catchThrowable(
                        () ->
                                term.fencer()
                                        .eval(
                                                "redis.call('INCR', KEYS[2])",
                                                java.util.List.of(name + ":h")));
        System.out.println(
                "review29: eval error reply -> "
                        + describe(failure)
                        + " cause "
                        + (failure == null ? null : failure.getCause()));
        assertThat(failure)
                .as("outcome: %s", describe(failure))
                .isNotExactlyInstanceOf(org.springframework.data.redis.RedisSystemException.class);
    }
}
