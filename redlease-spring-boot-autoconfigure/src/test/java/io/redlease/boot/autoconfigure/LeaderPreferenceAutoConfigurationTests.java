package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elector;
import io.redlease.core.Preference;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Preferred leadership from {@code redlease.preference.*}. */
@ExtendWith(RedisExtension.class)
class LeaderPreferenceAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderPreferenceAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=redlease-preference-test:"
                                        + info.getTestMethod().orElseThrow().getName()
                                        + ":"
                                        + System.nanoTime(),
                                "redlease.elections.reports.name=reports-" + System.nanoTime());
    }

    @Test
    void preferenceIsOffByDefault() {
        contextRunner.run(
                context -> {
                    Elector elector = context.getBean(Elector.class);
                    assertThat(elector.preference()).isEmpty();
                    assertThat(elector.config().leaseAwareScheduling()).isTrue();
                });
    }

    @Test
    void everyElectionGetsThePriorityAndVersionAndPollsAtItsAcquireInterval() {
        contextRunner
                .withPropertyValues(
                        "redlease.preference.priority=3", "redlease.preference.version=2.1.0")
                .run(
                        context ->
                                context.getBean(io.redlease.core.Elections.class)
                                        .asMap()
                                        .values()
                                        .forEach(
                                                elector -> {
                                                    assertThat(elector.preference())
                                                            .contains(Preference.of(3, "2.1.0"));
                                                    assertThat(
                                                                    elector.config()
                                                                            .leaseAwareScheduling())
                                                            .isFalse();
                                                }));
    }

    @Test
    void aVersionThatCannotBeComparedFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues("redlease.preference.version=--")
                .run(
                        context -> {
                            Throwable cause = context.getStartupFailure();
                            while (cause != null
                                    && !(cause
                                            instanceof
                                            InvalidConfigurationPropertyValueException)) {
                                cause = cause.getCause();
                            }
                            assertThat(cause).isNotNull();
                            InvalidConfigurationPropertyValueException failure =
                                    (InvalidConfigurationPropertyValueException) cause;
                            assertThat(failure.getName()).isEqualTo("redlease.preference.version");
                            assertThat(failure.getReason()).contains("letter or digit");
                        });
    }
}
