package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.UnknownElectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The failure analyzers' reports, by direct instantiation. */
class FailureAnalyzerTests {

    @Test
    void anInvalidPropertyIsReportedWithItsValueRuleAndFix() {
        InvalidRedleasePropertyException failure =
                new InvalidRedleasePropertyException(
                        "redlease.ttl",
                        Duration.ofMillis(50),
                        "TTL must be at least 100ms",
                        "Set redlease.ttl to at least 100ms; the default is 5s.",
                        null);
        FailureAnalysis analysis =
                new InvalidRedleasePropertyFailureAnalyzer()
                        .analyze(new IllegalStateException("wrapped", failure));
        assertThat(analysis.getDescription())
                .contains("Property: redlease.ttl")
                .contains("Value: PT0.05S")
                .contains("Reason: TTL must be at least 100ms");
        assertThat(analysis.getAction())
                .isEqualTo("Set redlease.ttl to at least 100ms; the default is 5s.");
    }

    @Test
    void aMissingNameIsReportedAsNotSet() {
        FailureAnalysis analysis =
                new InvalidRedleasePropertyFailureAnalyzer()
                        .analyze(
                                new InvalidRedleasePropertyException(
                                        "redlease.name",
                                        null,
                                        "must be set",
                                        "Set redlease.name.",
                                        null));
        assertThat(analysis.getDescription()).contains("Value: (not set)");
    }

    @Test
    void anUnknownElectionNamesTheMethodAndTheKnownIds() {
        LettuceConnectionFactory factory = new LettuceConnectionFactory();
        factory.afterPropertiesSet();
        Elections elections =
                Elections.of(
                        new Elector(
                                new StringRedisTemplate(factory),
                                ElectorConfig.builder("x").build()));
        UnknownElectionException unknown = null;
        try {
            elections.get("audit");
        } catch (UnknownElectionException ex) {
            unknown = ex;
        }
        BeanCreationException creation =
                new BeanCreationException(
                        "jobs",
                        "redlease: @LeaderOnly(\"audit\") on void Jobs.run() names an election that is not configured",
                        unknown);
        FailureAnalysis analysis = new UnknownElectionFailureAnalyzer().analyze(creation);
        assertThat(analysis.getDescription())
                .contains("No election 'audit' is configured; configured elections: [default]")
                .contains("@LeaderOnly(\"audit\") on void Jobs.run()");
        assertThat(analysis.getAction()).contains("redlease.elections.audit.name");
        factory.destroy();
    }
}
