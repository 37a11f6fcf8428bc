package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A blank value of a property that takes one of a set of values (such as {@code
 * redlease.shutdown-order}) fails the startup naming the property and the values, instead of being
 * taken as the default without a word, as Spring Boot's enum binding would take it.
 */
class BlankChoiceCheckTests {

    private final ApplicationContextRunner contextRunner =
            new ApplicationContextRunner()
                    .withConfiguration(
                            AutoConfigurations.of(RedleaseChecksAutoConfiguration.class));

    @Test
    void aBlankShutdownOrderFailsTheStartupNamingTheValues() {
        contextRunner
                .withPropertyValues("redlease.shutdown-order=")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .isInstanceOf(
                                                InvalidConfigurationPropertyValueException.class)
                                        .hasMessageContaining("redlease.shutdown-order")
                                        .hasMessageContaining(
                                                "before-http-drain, after-http-drain"));
    }

    @Test
    void aBlankMissedSlotsSetAsAnEnvironmentVariableFailsTheStartup() {
        contextRunner
                .withInitializer(
                        (ConfigurableApplicationContext context) ->
                                context.getEnvironment()
                                        .getPropertySources()
                                        .addFirst(
                                                new SystemEnvironmentPropertySource(
                                                        "test-systemEnvironment",
                                                        Map.of(
                                                                "REDLEASE_SCHEDULING_MISSEDSLOTS",
                                                                " "))))
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .isInstanceOf(
                                                InvalidConfigurationPropertyValueException.class)
                                        .hasMessageContaining("redlease.scheduling.missed-slots")
                                        .hasMessageContaining("run-latest, skip, run-all"));
    }

    @Test
    void aBlankChoiceIsLeftAloneWhileRedleaseIsSwitchedOff() {
        contextRunner
                .withPropertyValues("redlease.enabled=false", "redlease.shutdown-order=")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aChoiceThatIsSetPassesTheCheck() {
        contextRunner
                .withBean(RedisConnectionFactory.class, LettuceConnectionFactory::new)
                .withPropertyValues("redlease.shutdown-order=after-http-drain")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aBlankReachedThroughAPlaceholderFailsTheStartup() {
        contextRunner
                .withPropertyValues("redlease.shutdown-order=${REDLEASE_TEST_UNSET_ORDER:}")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .isInstanceOf(
                                                InvalidConfigurationPropertyValueException.class)
                                        .hasMessageContaining("redlease.shutdown-order"));
    }

    /** A value that takes precedence from a source that cannot list its names is the one bound. */
    @Test
    void aValueThatTakesPrecedenceFromASourceThatCannotListItsNamesPasses() {
        contextRunner
                .withBean(RedisConnectionFactory.class, LettuceConnectionFactory::new)
                .withPropertyValues("redlease.shutdown-order=")
                .withInitializer(
                        (ConfigurableApplicationContext context) ->
                                context.getEnvironment()
                                        .getPropertySources()
                                        .addFirst(
                                                new PropertySource<Object>("not-listed") {
                                                    @Override
                                                    public Object getProperty(String name) {
                                                        return "redlease.shutdown-order"
                                                                        .equals(name)
                                                                ? "after-http-drain"
                                                                : null;
                                                    }
                                                }))
                .run(context -> assertThat(context).hasNotFailed());
    }
}
