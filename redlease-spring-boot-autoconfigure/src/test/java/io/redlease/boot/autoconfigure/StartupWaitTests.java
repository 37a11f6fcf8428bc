package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.BlackholeServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The redlease lifecycle's start waits for the first outcome of the elections it starts, bounded by
 * their connect timeout plus TTL and by the shutdown phase timeout; a Redis that never answers does
 * not hold the application's startup longer.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupWaitTests {

    private final BlackholeServer blackhole = BlackholeServer.start();

    private ApplicationContextRunner contextRunner;

    private String name;

    @BeforeEach
    void setUp(TestInfo info) {
        this.name = "redlease-startup-wait-test:" + info.getTestMethod().orElseThrow().getName();
        // The server accepts connections and never answers; the client gives up after 1 s, so
        // closing the context does not wait long for its connection attempt.
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=redis://"
                                        + blackhole.host()
                                        + ":"
                                        + blackhole.port(),
                                "spring.data.redis.timeout=1s",
                                "spring.data.redis.connect-timeout=1s",
                                "redlease.name=" + name,
                                "redlease.ttl=1s");
    }

    @AfterEach
    void tearDown() {
        blackhole.close();
    }

    @Test
    void theWaitIsTheLongestConnectTimeoutPlusTtlAndNeverLongerThanTheShutdownPhase() {
        StringRedisTemplate redis = new StringRedisTemplate(new LettuceConnectionFactory());
        Elector quick =
                new Elector(
                        redis,
                        ElectorConfig.builder("quick")
                                .ttl(Duration.ofSeconds(2))
                                .connectTimeout(Duration.ofSeconds(1))
                                .build());
        Elector defaults = new Elector(redis, ElectorConfig.builder("defaults").build());
        Elections elections = Elections.of(Map.of(Elections.DEFAULT, quick), Map.of());
        RedleaseLifecycle thirtySeconds =
                new RedleaseLifecycle(elections, id -> true, null, Duration.ofSeconds(30));
        assertThat(thirtySeconds.startupWait(List.of(quick))).isEqualTo(Duration.ofSeconds(3));
        // The defaults: a 10 s connect timeout and a 5 s TTL.
        assertThat(thirtySeconds.startupWait(List.of(quick, defaults)))
                .isEqualTo(Duration.ofSeconds(15));
        RedleaseLifecycle twoSeconds =
                new RedleaseLifecycle(elections, id -> true, null, Duration.ofSeconds(2));
        assertThat(twoSeconds.startupWait(List.of(quick, defaults)))
                .isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void aServerThatNeverAnswersEndsTheWaitAtTheConnectTimeout(CapturedOutput output) {
        contextRunner
                .withPropertyValues("redlease.connect-timeout=300ms")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            Elector elector = context.getBean(Elector.class);
                            // The wait ended with the first outcome: the connection timed out.
                            assertThat(elector.firstOutcome()).isCompletedWithValue(false);
                            assertThat(elector.isLeader()).isFalse();
                            // The loop thread logs the timeout; the first outcome may be
                            // completed a moment before that line is written.
                            Awaitility.await()
                                    .atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                                    .untilAsserted(
                                            () ->
                                                    assertThat(output)
                                                            .contains(
                                                                    "redlease: connecting to Redis"
                                                                            + " for '"
                                                                            + name
                                                                            + "' got no reply"
                                                                            + " within 300ms"));
                            assertThat(output).doesNotContain("starting without a first outcome");
                        });
    }

    @Test
    void theShutdownPhaseTimeoutCutsTheWaitShort(CapturedOutput output) {
        contextRunner
                .withPropertyValues(
                        "redlease.connect-timeout=1m",
                        "spring.lifecycle.timeout-per-shutdown-phase=500ms")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context.getBean(Elector.class).firstOutcome()).isNotDone();
                            assertThat(output)
                                    .contains(
                                            "redlease: starting without a first outcome of ["
                                                    + name
                                                    + "] after 500 ms");
                        });
    }

    @Test
    void aConnectTimeoutBelowOneMillisecondFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues("redlease.connect-timeout=0s")
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            Throwable failure = context.getStartupFailure();
                            while (failure != null
                                    && !(failure
                                            instanceof
                                            InvalidConfigurationPropertyValueException)) {
                                failure = failure.getCause();
                            }
                            assertThat(failure)
                                    .isNotNull()
                                    .hasMessageContaining("redlease.connect-timeout")
                                    .hasMessageContaining("at least 1ms");
                        });
    }
}
