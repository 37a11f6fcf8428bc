package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * With redlease enabled, the auto-configuration backing off for want of a single {@code
 * RedisConnectionFactory} fails startup with the reason and the fix, never with a missing bean.
 */
@ExtendWith(RedisExtension.class)
class RedisConnectionFactoryCheckTests {

    private ApplicationContextRunner contextRunner;

    private RedisServer server;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        RedleaseDisabledAutoConfiguration.class,
                                        RedleaseChecksAutoConfiguration.class,
                                        LeaderOnlyAutoConfiguration.class))
                        .withPropertyValues(
                                "redlease.name={check-" + System.nanoTime() + "}",
                                "redlease.auto-startup=false");
    }

    private LettuceConnectionFactory factory() {
        return new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(server.host(), server.port()));
    }

    /** Needs the application's LeadershipContext, as the Quick start's job does. */
    record Job(LeadershipContext leadership) {}

    private static FailureAnalysis analysis(Throwable failure) {
        return new RedleaseUnavailableFailureAnalyzer().analyze(failure);
    }

    @Test
    void twoFactoriesAndNoPrimaryFailNamingBothAndTheFix() {
        contextRunner
                .withBean("first", LettuceConnectionFactory.class, this::factory)
                .withBean("second", LettuceConnectionFactory.class, this::factory)
                .withBean(Job.class)
                .run(
                        context -> {
                            assertThat(context.getStartupFailure())
                                    .isInstanceOf(RedleaseUnavailableException.class);
                            FailureAnalysis analysis = analysis(context.getStartupFailure());
                            assertThat(analysis.getDescription())
                                    .contains(
                                            "2 RedisConnectionFactory beans (first, second) and"
                                                    + " none is marked @Primary");
                            assertThat(analysis.getAction())
                                    .contains("@Primary")
                                    .contains("redlease.enabled=false");
                        });
    }

    @Test
    void noFactoryFailsNamingTheReasonAndTheFix() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                RedleaseAutoConfiguration.class,
                                RedleaseChecksAutoConfiguration.class,
                                LeaderOnlyAutoConfiguration.class))
                .withPropertyValues("redlease.name=x")
                .withBean(Job.class)
                .run(
                        context -> {
                            FailureAnalysis analysis = analysis(context.getStartupFailure());
                            assertThat(analysis.getDescription())
                                    .contains("the application has no RedisConnectionFactory bean");
                            assertThat(analysis.getAction())
                                    .contains("spring.data.redis")
                                    .contains("redlease.enabled=false");
                        });
    }

    @Test
    void twoFactoriesRegisteredAsSingletonsWithoutDefinitionsFailToo() {
        contextRunner
                .withInitializer(
                        context -> {
                            context.getBeanFactory().registerSingleton("first", factory());
                            context.getBeanFactory().registerSingleton("second", factory());
                        })
                .withBean(Job.class)
                .run(
                        context ->
                                assertThat(context.getStartupFailure())
                                        .isInstanceOf(RedleaseUnavailableException.class)
                                        .hasMessageContaining("(first, second)"));
    }

    @Test
    void aPrimaryFactoryIsUsed() {
        contextRunner
                .withBean("first", LettuceConnectionFactory.class, this::factory)
                .withBean(
                        "second",
                        LettuceConnectionFactory.class,
                        this::factory,
                        definition -> definition.setPrimary(true))
                .withBean(Job.class)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Elector.class));
    }

    @Test
    void oneFactoryBesideFallbacksIsUsed() {
        contextRunner
                .withBean("first", LettuceConnectionFactory.class, this::factory)
                .withBean(
                        "second",
                        LettuceConnectionFactory.class,
                        this::factory,
                        definition -> definition.setFallback(true))
                .withBean(Job.class)
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(Elector.class));
    }

    @Test
    void withTheSwitchOffTwoFactoriesAreFine() {
        contextRunner
                .withPropertyValues("redlease.enabled=false")
                .withBean("first", LettuceConnectionFactory.class, this::factory)
                .withBean("second", LettuceConnectionFactory.class, this::factory)
                .withBean(Job.class)
                .run(
                        context ->
                                assertThat(context)
                                        .hasNotFailed()
                                        .hasSingleBean(LeadershipContext.class));
    }

    @Test
    void anApplicationThatDeclaresItsOwnElectionsIsLeftAlone() {
        contextRunner
                .withBean("first", LettuceConnectionFactory.class, this::factory)
                .withBean("second", LettuceConnectionFactory.class, this::factory)
                .withBean(Elections.class, () -> Elections.disabled("the application's own", null))
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void anExcludedAutoConfigurationWithOneFactoryIsLeftAlone() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                DataRedisAutoConfiguration.class,
                                RedleaseChecksAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.url=" + server.url())
                .run(context -> assertThat(context).hasNotFailed());
    }
}
