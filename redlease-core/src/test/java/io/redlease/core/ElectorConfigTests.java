package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Validation, defaults and derived values of {@link ElectorConfig} (Go: TestNew_*). */
class ElectorConfigTests {

    private static ElectorConfig build(long ttlNanos, long renewNanos, long acquireNanos) {
        return ElectorConfig.builder("test")
                .ttl(Duration.ofNanos(ttlNanos))
                .renewInterval(Duration.ofNanos(renewNanos))
                .acquireInterval(Duration.ofNanos(acquireNanos))
                .build();
    }

    private static long ms(long millis) {
        return Duration.ofMillis(millis).toNanos();
    }

    @ParameterizedTest(name = "ttl={0}ns renew={1}ns acquire={2}ns -> {3}")
    @CsvSource(
            delimiter = '|',
            value = {
                // Go TestNew_Validation failures, with the seed's messages.
                "1000000000 | 1000000000 | 0 | redlease: RenewInterval must be at most TTL/2",
                "1000000000 | 600000000 | 0 | redlease: RenewInterval must be at most TTL/2",
                "1000000000 | 0 | 2000000000 | redlease: AcquireInterval must be less than TTL",
                "50000000 | 0 | 0 | redlease: TTL must be at least 100ms",
                "0 | 1 | 0 | redlease: RenewInterval must be at least 1ms",
                "0 | 0 | 500000 | redlease: AcquireInterval must be at least 1ms",
                "-1 | 0 | 0 | redlease: negative durations are not valid",
                "0 | -1 | 0 | redlease: negative durations are not valid",
                "0 | 0 | -1 | redlease: negative durations are not valid",
                // 99.9 ms truncates to 99 ms.
                "99900000 | 0 | 0 | redlease: TTL must be at least 100ms",
                // Acquire equal to the TTL is not less than it.
                "1000000000 | 0 | 1000000000 | redlease: AcquireInterval must be less than TTL",
            })
    void invalidSettingsAreRejectedWithTheSeedsMessage(
            long ttl, long renew, long acquire, String message) {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> build(ttl, renew, acquire))
                .withMessage(message);
    }

    @Test
    void rulesApplyInTheSeedsOrder() {
        // Negative beats a too-short TTL; a too-short TTL beats the interval rules.
        assertThatIllegalArgumentException()
                .isThrownBy(() -> build(ms(50), -1, 0))
                .withMessage("redlease: negative durations are not valid");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> build(ms(50), 1, ms(60)))
                .withMessage("redlease: TTL must be at least 100ms");
        // Renew above TTL/2 is reported before an acquire interval that is too long.
        assertThatIllegalArgumentException()
                .isThrownBy(() -> build(ms(1000), ms(900), ms(2000)))
                .withMessage("redlease: RenewInterval must be at most TTL/2");
        // Acquire >= TTL is reported before a renew interval below 1 ms.
        assertThatIllegalArgumentException()
                .isThrownBy(() -> build(ms(1000), 1, ms(2000)))
                .withMessage("redlease: AcquireInterval must be less than TTL");
    }

    @Test
    void emptyOrNullNameIsRejected() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ElectorConfig.builder("").build())
                .withMessage("redlease: empty Name");
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(() -> ElectorConfig.builder(null).build())
                .withMessage("redlease: empty Name")
                .extracting(InvalidElectorConfigException::setting)
                .isEqualTo(InvalidElectorConfigException.Setting.NAME);
    }

    @Test
    void nullArgumentsAreRejectedByName() {
        ElectorConfig.Builder builder = ElectorConfig.builder("test");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> builder.ttl(null))
                .withMessage("redlease: ttl must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> builder.renewInterval(null))
                .withMessage("redlease: renewInterval must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> builder.acquireInterval(null))
                .withMessage("redlease: acquireInterval must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> builder.instanceId(null))
                .withMessage("redlease: instanceId must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> builder.observer(null))
                .withMessage("redlease: observer must not be null");
    }

    @Test
    void boundaryValuesAreAccepted() {
        // Renew exactly TTL/2.
        assertThat(build(ms(1000), ms(500), 0).renewInterval()).isEqualTo(Duration.ofMillis(500));
        // The smallest TTL with 20 ms intervals.
        ElectorConfig smallest = build(ms(100), ms(20), ms(20));
        assertThat(smallest.ttl()).isEqualTo(Duration.ofMillis(100));
        // 100.9 ms truncates to 100 ms, which passes.
        assertThat(build(100_900_000, 0, 0).ttl()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void defaultsDeriveFromTheTtl() {
        ElectorConfig defaults = ElectorConfig.builder("test").build();
        assertThat(defaults.ttl()).isEqualTo(Duration.ofSeconds(5));
        assertThat(defaults.renewInterval()).isEqualTo(Duration.ofNanos(1_666_666_666));
        assertThat(defaults.acquireInterval()).isEqualTo(Duration.ofMillis(2500));
        assertThat(defaults.acquireTimeout()).isEqualTo(Duration.ofMillis(2500));
        assertThat(defaults.leaseAwareScheduling()).isTrue();

        ElectorConfig twoSeconds = build(ms(2000), 0, 0);
        assertThat(twoSeconds.renewInterval()).isEqualTo(Duration.ofNanos(666_666_666));
        assertThat(twoSeconds.acquireInterval()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void connectTimeoutIsTenSecondsUnlessSetAndAtLeastOneMillisecond() {
        assertThat(ElectorConfig.builder("test").build().connectTimeout())
                .isEqualTo(Duration.ofSeconds(10));
        ElectorConfig config =
                ElectorConfig.builder("test").connectTimeout(Duration.ofSeconds(3)).build();
        assertThat(config.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(config.toBuilder().build().connectTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(() -> ElectorConfig.builder("test").connectTimeout(Duration.ZERO))
                .withMessage("redlease: connect timeout must be at least 1ms")
                .extracting(InvalidElectorConfigException::setting)
                .isEqualTo(InvalidElectorConfigException.Setting.CONNECT_TIMEOUT);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ElectorConfig.builder("test").connectTimeout(null))
                .withMessage("redlease: connectTimeout must not be null");
    }

    @Test
    void acquireTimeoutIsTheSmallerOfAcquireIntervalAndTtlMinusRenew() {
        assertThat(build(ms(2000), ms(50), ms(50)).acquireTimeout())
                .isEqualTo(Duration.ofMillis(50));
        assertThat(build(ms(1000), ms(500), ms(900)).acquireTimeout())
                .isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void fractionalTtlIsTruncatedToWholeMilliseconds() {
        ElectorConfig config = build(ms(150) + 900_000, 0, 0);
        assertThat(config.ttl()).isEqualTo(Duration.ofMillis(150));
    }

    @Test
    void generatedInstanceIdIsHostDashSixteenHexDigits() {
        String id = ElectorConfig.builder("test").build().instanceId();
        assertThat(id).matches("(.+-)?[0-9a-f]{16}");
        assertThat(ElectorConfig.builder("test").build().instanceId()).isNotEqualTo(id);
    }

    @Test
    void explicitInstanceIdIsUsedVerbatim() {
        assertThat(ElectorConfig.builder("test").instanceId("pod-7").build().instanceId())
                .isEqualTo("pod-7");
    }

    @Test
    void toBuilderKeepsEverySetting() {
        Observer observer = new Observer() {};
        ElectorConfig config =
                ElectorConfig.builder("test")
                        .ttl(Duration.ofSeconds(3))
                        .instanceId("a")
                        .observer(observer)
                        .leaseAwareScheduling(false)
                        .build();
        ElectorConfig copy = config.toBuilder().build();
        assertThat(copy.ttl()).isEqualTo(config.ttl());
        assertThat(copy.renewInterval()).isEqualTo(config.renewInterval());
        assertThat(copy.instanceId()).isEqualTo("a");
        assertThat(copy.observers()).containsExactly(observer);
        assertThat(copy.leaseAwareScheduling()).isFalse();
    }

    @ParameterizedTest(name = "{3}")
    @CsvSource(
            delimiter = '|',
            value = {
                "-1 | 0 | 0 | TTL",
                "0 | -1 | 0 | RENEW_INTERVAL",
                "0 | 0 | -1 | ACQUIRE_INTERVAL",
                "50000000 | 0 | 0 | TTL",
                "1000000000 | 600000000 | 0 | RENEW_INTERVAL",
                "0 | 1 | 0 | RENEW_INTERVAL",
                "1000000000 | 0 | 1000000000 | ACQUIRE_INTERVAL",
                "0 | 0 | 500000 | ACQUIRE_INTERVAL",
            })
    void theExceptionNamesTheSettingThatBrokeARule(
            long ttl, long renew, long acquire, String setting) {
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(() -> build(ttl, renew, acquire))
                .extracting(InvalidElectorConfigException::setting)
                .isEqualTo(InvalidElectorConfigException.Setting.valueOf(setting));
    }

    @Test
    void replicaAcknowledgementIsValidated() {
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(
                        () ->
                                ElectorConfig.builder("test")
                                        .replicaAcknowledgement(-1, Duration.ofMillis(10)))
                .withMessage("redlease: replica acknowledgement count must not be negative");
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(
                        () ->
                                ElectorConfig.builder("test")
                                        .replicaAcknowledgement(1, Duration.ZERO)
                                        .build())
                .withMessageContaining("must be positive and less than the acquire timeout")
                .extracting(InvalidElectorConfigException::setting)
                .isEqualTo(InvalidElectorConfigException.Setting.REPLICA_ACKNOWLEDGEMENT);
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(
                        () ->
                                ElectorConfig.builder("test")
                                        .replicaAcknowledgement(1, Duration.ofMillis(2500))
                                        .build())
                .withMessageContaining("2500ms");
        ElectorConfig config =
                ElectorConfig.builder("test")
                        .replicaAcknowledgement(1, Duration.ofMillis(100))
                        .build();
        assertThat(config.replicaAcknowledgements()).isOne();
        assertThat(config.replicaAcknowledgementTimeout()).isEqualTo(Duration.ofMillis(100));
        assertThat(ElectorConfig.builder("test").build().replicaAcknowledgements()).isZero();
        assertThat(ElectorConfig.builder("test").build().releaseNotifications()).isTrue();
    }
}
