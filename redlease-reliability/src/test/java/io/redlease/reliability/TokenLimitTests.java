package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.redlease.core.Elector;
import io.redlease.core.Fencer;
import io.redlease.core.Observer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tokens near 2^53, where Lua's doubles stop being exact: 2^53 - 1 works and is stored exactly;
 * larger tokens are refused before they reach Lua, and a term that would get one is not started.
 */
@ExtendWith(RedisExtension.class)
class TokenLimitTests {

    private static final long LIMIT = 1L << 53;

    @Test
    void tokensFromTwoToTheFiftyThreeAreRefusedBeforeLua(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            String mark = harness.log.markKey();
            List<Long> elected = new CopyOnWriteArrayList<>();
            List<String> errors = new CopyOnWriteArrayList<>();
            harness.control().opsForValue().set(harness.log.counterKey(), Long.toString(LIMIT - 2));
            harness.control().opsForValue().set(mark, Long.toString(LIMIT - 2));
            try (Elector elector =
                    new Elector(
                            harness.control(),
                            harness.config()
                                    .instanceId("a")
                                    .observer(
                                            new Observer() {
                                                @Override
                                                public void onElected(long token) {
                                                    elected.add(token);
                                                }

                                                @Override
                                                public void onError(
                                                        Operation operation, Throwable error) {
                                                    errors.add(operation + " " + error);
                                                }
                                            })
                                    .build())) {
                elector.start();
                Awaitility.await().atMost(scaled(Duration.ofSeconds(5))).until(elector::isLeader);
                assertThat(elector.token()).isEqualTo(OptionalLong.of(LIMIT - 1));
                Fencer last = elector.fencer().orElseThrow();
                assertThat(last.set(harness.name + ":value", "max")).isTrue();
                assertThat(harness.control().opsForValue().get(mark))
                        .isEqualTo(Long.toString(LIMIT - 1));
                for (long token : List.of(LIMIT, LIMIT + 1, Long.MAX_VALUE)) {
                    assertThatIllegalArgumentException()
                            .isThrownBy(() -> elector.fencer(token))
                            .withMessageContaining("2^53");
                    assertThatIllegalArgumentException()
                            .isThrownBy(
                                    () -> elector.fencer(token).set(harness.name + ":value", "x"))
                            .withMessageContaining("2^53");
                    assertThatIllegalArgumentException()
                            .isThrownBy(
                                    () ->
                                            elector.fencer(token)
                                                    .eval(
                                                            FencedLog.BODY,
                                                            harness.log.keys(),
                                                            "1",
                                                            "x"))
                            .withMessageContaining("2^53");
                }
                // Nothing reached Lua: the mark and the value are as the last valid write left
                // them.
                assertThat(harness.control().opsForValue().get(mark))
                        .isEqualTo(Long.toString(LIMIT - 1));
                assertThat(harness.control().opsForValue().get(harness.name + ":value"))
                        .isEqualTo("max");
                // Negative and zero tokens are stale without a round trip.
                assertThat(elector.fencer(-1).set(harness.name + ":value", "x")).isFalse();
                assertThat(elector.fencer(0).set(harness.name + ":value", "x")).isFalse();
                assertThat(harness.control().opsForValue().get(harness.name + ":value"))
                        .isEqualTo("max");
                // The next term would get 2^53 itself: it is not started. The acquire is reported
                // as an error, the lease is released, and every later attempt is refused alike.
                elector.resign();
                Awaitility.await()
                        .atMost(scaled(Duration.ofSeconds(5)))
                        .until(() -> errors.stream().filter(e -> e.contains("2^53")).count() >= 2);
                assertThat(elected).allMatch(token -> token < LIMIT);
                assertThat(errors)
                        .filteredOn(e -> e.contains("2^53"))
                        .allMatch(e -> e.contains("reset <name>:fence"));
                // The acquire stamped the mark at 2^53 or more before the elector refused the
                // term: the last valid token is fenced out too, nothing moves backwards.
                assertThat(Long.parseLong(harness.control().opsForValue().get(mark)))
                        .isGreaterThanOrEqualTo(LIMIT);
                assertThat(last.set(harness.name + ":value", "stale")).isFalse();
                assertThat(harness.control().opsForValue().get(harness.name + ":value"))
                        .isEqualTo("max");
                Figures.count("terms refused at the 2^53 limit", errors.size());
            }
        }
    }
}
