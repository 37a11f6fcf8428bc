package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.autoconfigure.actuate.RedleaseEndpointAutoConfiguration;
import io.redlease.boot.autoconfigure.health.RedleaseHealthContributorAutoConfiguration;
import io.redlease.boot.autoconfigure.metrics.RedleaseMetricsAutoConfiguration;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeaderTask;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Observer;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Conditions and bean wiring of the redlease auto-configurations, against a real Redis. */
@ExtendWith(RedisExtension.class)
class RedleaseAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    private String name;

    private RedisServer server;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-boot-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderOnlyAutoConfiguration.class,
                                        RedleaseMetricsAutoConfiguration.class,
                                        RedleaseHealthContributorAutoConfiguration.class,
                                        RedleaseEndpointAutoConfiguration.class))
                        .withPropertyValues("spring.data.redis.url=" + server.url());
    }

    @Test
    void runWithANameCreatesTheMainElectionAndItsCompanions() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            Elector elector = context.getBean(Elector.class);
                            assertThat(elector.name()).isEqualTo(name);
                            assertThat(elector.config().ttl()).isEqualTo(Duration.ofSeconds(5));
                            assertThat(context.getBean(Elections.class).ids())
                                    .containsExactly(Elections.DEFAULT);
                            assertThat(context).hasSingleBean(LeadershipContext.class);
                            assertThat(context)
                                    .hasSingleBean(LeaderOnlyAnnotationBeanPostProcessor.class);
                            assertThat(context).hasSingleBean(RedleaseMetrics.class);
                            assertThat(context).hasSingleBean(RedleaseHealthIndicator.class);
                            assertThat(context).hasSingleBean(RedleaseLifecycle.class);
                            await().until(elector::isLeader);
                        });
    }

    @Test
    void runWhenDisabledShouldNotCreateElector() {
        contextRunner
                .withPropertyValues("redlease.enabled=false", "redlease.name=" + name)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(Elector.class);
                            assertThat(context).doesNotHaveBean(Elections.class);
                            assertThat(context)
                                    .doesNotHaveBean(LeaderOnlyAnnotationBeanPostProcessor.class);
                            assertThat(context).doesNotHaveBean(RedleaseHealthIndicator.class);
                        });
    }

    @Test
    void runWithoutANameFailsNamingTheProperty() {
        contextRunner.run(
                context ->
                        assertThat(context)
                                .getFailure()
                                .rootCause()
                                .isInstanceOf(InvalidRedleasePropertyException.class)
                                .hasMessageContaining("redlease.name"));
    }

    @Test
    void runWithABadTimingFailsNamingThePropertyTheValueAndTheRule() {
        contextRunner
                .withPropertyValues("redlease.name=" + name, "redlease.ttl=50ms")
                .run(
                        context -> {
                            InvalidConfigurationPropertyValueException failure =
                                    invalidValue(context.getStartupFailure());
                            assertThat(failure.getName()).isEqualTo("redlease.ttl");
                            assertThat(failure.getValue()).isEqualTo(Duration.ofMillis(50));
                            assertThat(failure.getReason())
                                    .startsWith("TTL must be at least 100ms. Set redlease.ttl");
                        });
        contextRunner
                .withPropertyValues(
                        "redlease.name=" + name, "redlease.ttl=1s", "redlease.renew-interval=600ms")
                .run(
                        context ->
                                assertThat(invalidValue(context.getStartupFailure()).getName())
                                        .isEqualTo("redlease.renew-interval"));
        contextRunner
                .withPropertyValues(
                        "redlease.name=" + name, "redlease.ttl=1s", "redlease.acquire-interval=-1s")
                .run(
                        context ->
                                assertThat(invalidValue(context.getStartupFailure()))
                                        .satisfies(
                                                f -> {
                                                    assertThat(f.getName())
                                                            .isEqualTo("redlease.acquire-interval");
                                                    assertThat(f.getReason())
                                                            .startsWith(
                                                                    "negative durations are not valid.");
                                                }));
    }

    @Test
    void anExtraElectionInheritsAndReportsItsOwnProperty() {
        contextRunner
                .withPropertyValues(
                        "redlease.name=" + name,
                        "redlease.ttl=2s",
                        "redlease.acquire-interval=300ms",
                        "redlease.elections.audit.name=" + name + "-audit",
                        "redlease.elections.audit.renew-interval=200ms",
                        "redlease.elections.reports.name=" + name + "-reports",
                        "redlease.elections.reports.ttl=900ms",
                        "redlease.elections.reports.auto-startup=false")
                .run(
                        context -> {
                            Elections elections = context.getBean(Elections.class);
                            assertThat(elections.ids())
                                    .containsExactly("default", "audit", "reports");
                            ElectorConfig audit = elections.get("audit").config();
                            assertThat(audit.name()).isEqualTo(name + "-audit");
                            assertThat(audit.ttl()).isEqualTo(Duration.ofSeconds(2));
                            assertThat(audit.renewInterval()).isEqualTo(Duration.ofMillis(200));
                            assertThat(audit.acquireInterval()).isEqualTo(Duration.ofMillis(300));
                            ElectorConfig reports = elections.get("reports").config();
                            assertThat(reports.ttl()).isEqualTo(Duration.ofMillis(900));
                            assertThat(reports.renewInterval()).isEqualTo(Duration.ofMillis(300));
                            await().until(() -> elections.get("audit").isLeader());
                            assertThat(elections.get("reports").isRunning()).isFalse();
                        });
        contextRunner
                .withPropertyValues(
                        "redlease.name=" + name,
                        "redlease.elections.audit.name=" + name + "-audit",
                        "redlease.elections.audit.ttl=10ms")
                .run(
                        context ->
                                assertThat(invalidValue(context.getStartupFailure()).getName())
                                        .isEqualTo("redlease.elections.audit.ttl"));
        contextRunner
                .withPropertyValues("redlease.name=" + name, "redlease.elections.audit.ttl=2s")
                .run(
                        context ->
                                assertThat(failure(context.getStartupFailure()).property())
                                        .isEqualTo("redlease.elections.audit.name"));
        contextRunner
                .withPropertyValues("redlease.name=" + name, "redlease.elections.default.name=x")
                .run(
                        context ->
                                assertThat(failure(context.getStartupFailure()).property())
                                        .isEqualTo("redlease.elections.default"));
    }

    @Test
    void autoStartupFalseLeavesTheElectorStopped() {
        contextRunner
                .withPropertyValues("redlease.name=" + name, "redlease.auto-startup=false")
                .run(
                        context -> {
                            Elector elector = context.getBean(Elector.class);
                            assertThat(elector.isRunning()).isFalse();
                            elector.start();
                            await().until(elector::isLeader);
                        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserElector {

        @Bean
        Elector myElector(StringRedisTemplate redis) {
            return new Elector(redis, ElectorConfig.builder("user-" + System.nanoTime()).build());
        }
    }

    @Test
    void aUserDefinedElectorReplacesTheMainOne() {
        contextRunner
                .withUserConfiguration(UserElector.class)
                .run(
                        context -> {
                            assertThat(context).hasSingleBean(Elector.class);
                            assertThat(context).hasBean("myElector");
                            assertThat(context.getBean(Elections.class).get(Elections.DEFAULT))
                                    .isSameAs(context.getBean(Elector.class));
                        });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserElections {

        @Bean
        Elections myElections(StringRedisTemplate redis) {
            return Elections.of(new Elector(redis, ElectorConfig.builder("mine").build()));
        }
    }

    @Test
    void aUserDefinedRegistryReplacesTheAutoConfiguredOne() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withUserConfiguration(UserElections.class)
                .run(
                        context -> {
                            assertThat(context).hasSingleBean(Elections.class);
                            assertThat(context.getBean(Elections.class).get("").name())
                                    .isEqualTo("mine");
                        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Customized {

        static final List<String> seen = new CopyOnWriteArrayList<>();

        @Bean
        ElectorCustomizer instanceIds() {
            return (id, builder) -> {
                seen.add(id);
                builder.instanceId("custom-" + id);
            };
        }
    }

    @Test
    void customizersAdjustEveryElection() {
        contextRunner
                .withPropertyValues(
                        "redlease.name=" + name, "redlease.elections.audit.name=" + name + "-a")
                .withUserConfiguration(Customized.class)
                .run(
                        context -> {
                            Elections elections = context.getBean(Elections.class);
                            assertThat(elections.get("").instanceId()).isEqualTo("custom-default");
                            assertThat(elections.get("audit").instanceId())
                                    .isEqualTo("custom-audit");
                        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Tasks {

        static final AtomicLong first = new AtomicLong();

        static final AtomicLong second = new AtomicLong();

        @Bean
        LeaderTask firstTask() {
            return term -> {
                first.set(term.token());
                term.awaitEnd();
            };
        }

        @Bean
        LeaderTask secondTask() {
            return term -> {
                second.set(term.token());
                term.awaitEnd();
            };
        }
    }

    @Test
    void leaderTaskBeansRunInEveryTermOfTheMainElection() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withUserConfiguration(Tasks.class)
                .run(
                        context -> {
                            Elector elector = context.getBean(Elector.class);
                            await().until(elector::isLeader);
                            long token = elector.token().orElseThrow();
                            await().until(
                                            () ->
                                                    Tasks.first.get() == token
                                                            && Tasks.second.get() == token);
                            elector.resign();
                            await().until(
                                            () ->
                                                    Tasks.first.get() > token
                                                            && Tasks.second.get()
                                                                    == Tasks.first.get());
                        });
    }

    @Test
    void withoutMicrometerThereAreNoMeters() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(RedleaseMetrics.class);
                        });
    }

    @Test
    void metersAreBoundToTheRegistry() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withBean(SimpleMeterRegistry.class)
                .run(
                        context -> {
                            SimpleMeterRegistry registry =
                                    context.getBean(SimpleMeterRegistry.class);
                            context.getBean(RedleaseMetrics.class).bindTo(registry);
                            await().until(
                                            () ->
                                                    registry.get(RedleaseMetrics.LEADER)
                                                                    .tag("name", name)
                                                                    .gauge()
                                                                    .value()
                                                            == 1.0);
                            assertThat(
                                            registry.get(RedleaseMetrics.ELECTIONS)
                                                    .tag("name", name)
                                                    .functionCounter()
                                                    .count())
                                    .isEqualTo(1.0);
                        });
    }

    @Test
    void leaseAgeAndTtlGaugesDescribeTheLease() {
        contextRunner
                .withPropertyValues("redlease.name=" + name, "redlease.ttl=3s")
                .withBean(SimpleMeterRegistry.class)
                .run(
                        context -> {
                            SimpleMeterRegistry registry =
                                    context.getBean(SimpleMeterRegistry.class);
                            context.getBean(RedleaseMetrics.class).bindTo(registry);
                            assertThat(
                                            registry.get(RedleaseMetrics.LEASE_TTL)
                                                    .tag("name", name)
                                                    .gauge()
                                                    .value())
                                    .isEqualTo(3.0);
                            await().until(
                                            () ->
                                                    registry.get(RedleaseMetrics.LEADER)
                                                                    .tag("name", name)
                                                                    .gauge()
                                                                    .value()
                                                            == 1.0);
                            // A leader renews every third of the TTL: its lease is never older.
                            assertThat(
                                            registry.get(RedleaseMetrics.LEASE_AGE)
                                                    .tag("name", name)
                                                    .gauge()
                                                    .value())
                                    .isBetween(0.0, 3.0);
                        });
    }

    @Test
    void withoutActuatorThereIsNoHealthOrEndpoint() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withClassLoader(
                        new FilteredClassLoader(
                                AbstractHealthIndicator.class, RedleaseEndpoint.class))
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(RedleaseHealthIndicator.class);
                            assertThat(context).doesNotHaveBean(RedleaseEndpoint.class);
                        });
    }

    @Test
    void theEndpointIsNotCreatedUnlessExposed() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .run(context -> assertThat(context).doesNotHaveBean(RedleaseEndpoint.class));
    }

    @Test
    void theEndpointIsCreatedWhenExposed() {
        contextRunner
                .withPropertyValues(
                        "redlease.name=" + name,
                        "spring.jmx.enabled=true",
                        "management.endpoints.jmx.exposure.include=redlease")
                .run(context -> assertThat(context).hasSingleBean(RedleaseEndpoint.class));
    }

    @Test
    void withoutARedisConnectionFactoryItBacksOff() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                RedleaseAutoConfiguration.class, LeaderOnlyAutoConfiguration.class))
                .withPropertyValues("redlease.name=" + name)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(Elector.class);
                        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoConnectionFactories {

        static LettuceConnectionFactory factory(RedisServer server) {
            return new LettuceConnectionFactory(
                    new RedisStandaloneConfiguration(server.host(), server.port()));
        }
    }

    @Test
    void withTwoConnectionFactoriesItBacksOff() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withBean("first", LettuceConnectionFactory.class, () -> factory())
                .withBean("second", LettuceConnectionFactory.class, () -> factory())
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(Elector.class);
                            assertThat(context).doesNotHaveBean(RedleaseHealthIndicator.class);
                        });
    }

    @Test
    void withTwoConnectionFactoriesItUsesThePrimaryOne() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withBean("first", LettuceConnectionFactory.class, () -> factory())
                .withBean(
                        "second",
                        LettuceConnectionFactory.class,
                        () -> factory(),
                        definition -> definition.setPrimary(true))
                .run(
                        context -> {
                            assertThat(context).hasSingleBean(Elector.class);
                            await().until(context.getBean(Elector.class)::isLeader);
                        });
    }

    static class LeaderOnlyJob {

        @LeaderOnly
        public void run() {}
    }

    @Test
    void leaderOnlyMethodsWithoutElectionsFailStartupInsteadOfRunningEverywhere() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withBean("first", LettuceConnectionFactory.class, () -> factory())
                .withBean("second", LettuceConnectionFactory.class, () -> factory())
                .withBean(LeaderOnlyJob.class)
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .isInstanceOf(NoSuchBeanDefinitionException.class)
                                        .hasMessageContaining(Elections.class.getName()));
    }

    private LettuceConnectionFactory factory() {
        return TwoConnectionFactories.factory(server);
    }

    @Configuration(proxyBeanMethods = false)
    static class UserHealthIndicator {

        @Bean
        RedleaseHealthIndicator myHealth(Elections elections) {
            return new RedleaseHealthIndicator(elections);
        }
    }

    @Test
    void theHealthIndicatorBacksOffForAUserIndicatorOfItsType() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withUserConfiguration(UserHealthIndicator.class)
                .run(
                        context -> {
                            assertThat(context).hasSingleBean(RedleaseHealthIndicator.class);
                            assertThat(context).hasBean("myHealth");
                        });
    }

    @Test
    void theHealthIndicatorBacksOffForAUserContributorOfItsName() {
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withBean(
                        "redleaseHealthContributor",
                        HealthIndicator.class,
                        () -> () -> Health.up().build())
                .run(context -> assertThat(context).doesNotHaveBean(RedleaseHealthIndicator.class));
    }

    @Test
    void theLifecycleStopsTheElectionsWithTheContext() {
        Elector[] captured = new Elector[1];
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .run(
                        context -> {
                            captured[0] = context.getBean(Elector.class);
                            await().until(captured[0]::isLeader);
                        });
        assertThat(captured[0].isRunning()).isFalse();
        assertThat(server.command("EXISTS", name + ":leader")).isEqualTo(0L);
    }

    @Test
    void observersAddedByCustomizersSeeTransitions() {
        List<Long> tokens = new CopyOnWriteArrayList<>();
        contextRunner
                .withPropertyValues("redlease.name=" + name)
                .withBean(
                        ElectorCustomizer.class,
                        () ->
                                (id, builder) ->
                                        builder.observer(
                                                new Observer() {
                                                    @Override
                                                    public void onElected(long token) {
                                                        tokens.add(token);
                                                    }
                                                }))
                .run(context -> await().until(() -> !tokens.isEmpty()));
    }

    private static InvalidConfigurationPropertyValueException invalidValue(
            Throwable startupFailure) {
        Throwable cause = startupFailure;
        while (cause != null && !(cause instanceof InvalidConfigurationPropertyValueException)) {
            cause = cause.getCause();
        }
        assertThat(cause)
                .as("InvalidConfigurationPropertyValueException in %s", startupFailure)
                .isNotNull();
        return (InvalidConfigurationPropertyValueException) cause;
    }

    private static InvalidRedleasePropertyException failure(Throwable startupFailure) {
        Throwable cause = startupFailure;
        while (cause != null && !(cause instanceof InvalidRedleasePropertyException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("InvalidRedleasePropertyException in %s", startupFailure).isNotNull();
        return (InvalidRedleasePropertyException) cause;
    }
}
