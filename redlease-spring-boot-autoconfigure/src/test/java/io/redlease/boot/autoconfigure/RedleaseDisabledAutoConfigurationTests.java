package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.autoconfigure.actuate.RedleaseEndpointAutoConfiguration;
import io.redlease.boot.autoconfigure.health.RedleaseHealthContributorAutoConfiguration;
import io.redlease.boot.autoconfigure.metrics.RedleaseMetricsAutoConfiguration;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.ElectionDisabledException;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeaderMetadata;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * {@code redlease.enabled=false}: the application keeps every bean it injects, answering
 * "disabled". No Redis is needed, so none is configured.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedleaseDisabledAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner =
            new ApplicationContextRunner()
                    .withConfiguration(
                            AutoConfigurations.of(
                                    DataRedisAutoConfiguration.class,
                                    RedleaseAutoConfiguration.class,
                                    RedleaseDisabledAutoConfiguration.class,
                                    RedleaseChecksAutoConfiguration.class,
                                    LeaderOnlyAutoConfiguration.class,
                                    LeaderLifecycleAutoConfiguration.class,
                                    RedleaseMetricsAutoConfiguration.class,
                                    RedleaseHealthContributorAutoConfiguration.class,
                                    RedleaseEndpointAutoConfiguration.class,
                                    LeaderDiscoveryAutoConfiguration.class))
                    .withPropertyValues("redlease.enabled=false", "redlease.name={disabled}");

    /** A job as the Quick start writes it: injects LeadershipContext, writes through the fence. */
    static class Job {

        final LeadershipContext leadership;

        final AtomicInteger runs = new AtomicInteger();

        Job(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        public void run() {
            runs.incrementAndGet();
            leadership.requireFencer();
        }
    }

    @Test
    void leadershipContextAnswersThatThisInstanceDoesNotLead() {
        contextRunner
                .withBean(Job.class)
                .withPropertyValues("redlease.instance-id=node-7")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            LeadershipContext leadership = context.getBean(LeadershipContext.class);
                            assertThat(leadership.isLeader()).isFalse();
                            assertThat(leadership.token()).isEmpty();
                            assertThat(leadership.fencer()).isEmpty();
                            assertThat(leadership.leaderInfo()).isEmpty();
                            assertThat(leadership.instanceId()).isEqualTo("node-7");
                            assertThatThrownBy(leadership::requireFencer)
                                    .isInstanceOf(ElectionDisabledException.class)
                                    .hasMessageContaining("redlease.enabled=false");
                            assertThatThrownBy(() -> leadership.reactiveFencer().block())
                                    .isInstanceOf(ElectionDisabledException.class);
                        });
    }

    @Test
    void leaderOnlyMethodsRunOnEveryInstanceAndTheirFencedWritesFailNamingTheSwitch() {
        contextRunner
                .withBean(Job.class)
                .run(
                        context -> {
                            Job job = context.getBean(Job.class);
                            assertThatThrownBy(job::run)
                                    .isInstanceOf(ElectionDisabledException.class)
                                    .hasMessageContaining("redlease.enabled=false");
                            assertThat(job.runs).as("the method ran here").hasValue(1);
                            assertThat(context)
                                    .doesNotHaveBean(LeaderOnlyAnnotationBeanPostProcessor.class)
                                    .hasSingleBean(LeaderOnlyDisabledWarning.class);
                        });
    }

    @Test
    void electionsIsADisabledRegistryThatNamesTheSwitch() {
        contextRunner.run(
                context -> {
                    Elections elections = context.getBean(Elections.class);
                    assertThat(elections.isEnabled()).isFalse();
                    assertThat(elections.ids()).isEmpty();
                    assertThatThrownBy(() -> elections.get("default"))
                            .isInstanceOf(ElectionDisabledException.class)
                            .hasMessageContaining("redlease.enabled=false");
                    assertThatThrownBy(() -> elections.partitioned("tenants"))
                            .isInstanceOf(ElectionDisabledException.class)
                            .hasMessageContaining("redlease.enabled=false");
                    assertThat(context).doesNotHaveBean(Elector.class);
                });
    }

    @Test
    void nothingThatReportsOrDrivesElectionsIsCreated() {
        contextRunner
                .withPropertyValues(
                        "management.endpoints.web.exposure.include=redlease",
                        "redlease.discovery.enabled=true",
                        "redlease.keep-alive=true")
                .run(
                        context ->
                                assertThat(context)
                                        .hasNotFailed()
                                        .doesNotHaveBean(RedleaseHealthIndicator.class)
                                        .doesNotHaveBean(RedleaseEndpoint.class)
                                        .doesNotHaveBean(LeaderMetadata.class)
                                        .doesNotHaveBean(LeaderLifecycles.class)
                                        .doesNotHaveBean(LeaderOnlyKeepAlive.class)
                                        .doesNotHaveBean(RedleaseLifecycle.class));
    }

    @Test
    void theApplicationsOwnBeansAreKept() {
        LeadershipContext own = new LeadershipContext(Elections.disabled("mine", "own"));
        contextRunner
                .withBean(LeadershipContext.class, () -> own)
                .run(context -> assertThat(context.getBean(LeadershipContext.class)).isSameAs(own));
    }

    private static StandardEnvironment environment(String enabled) {
        StandardEnvironment environment = new StandardEnvironment();
        environment
                .getPropertySources()
                .addFirst(new MapPropertySource("test", Map.of("redlease.enabled", enabled)));
        return environment;
    }

    /** A leader-only consumer that the context does not start itself. */
    @LeaderOnly
    static class PlainConsumer implements Lifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    /** A leader-only consumer declared not to start with the context. */
    @LeaderOnly
    static class ManualConsumer extends PlainConsumer implements SmartLifecycle {

        @Override
        public boolean isAutoStartup() {
            return false;
        }
    }

    @Test
    void leaderOnlyLifecyclesStartOnEveryInstanceAndStopWithTheContext(CapturedOutput output) {
        PlainConsumer plain = new PlainConsumer();
        ManualConsumer manual = new ManualConsumer();
        contextRunner
                .withBean("plain", PlainConsumer.class, () -> plain)
                .withBean("manual", ManualConsumer.class, () -> manual)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(plain.isRunning()).isTrue();
                            assertThat(manual.isRunning()).isTrue();
                        });
        assertThat(plain.isRunning()).isFalse();
        assertThat(manual.isRunning()).isFalse();
        assertThat(output)
                .contains(
                        "redlease: with redlease.enabled=false, leader-only lifecycles and listener containers"
                                + " are started with the application, so they run on every"
                                + " instance: [plain, manual]");
    }

    @Test
    void aListenerIdThatNoContainerHasFailsStartupAsWithRedleaseEnabled() {
        contextRunner
                .withPropertyValues("redlease.lifecycle.listeners=ordres")
                .run(
                        context ->
                                assertThat(context.getStartupFailure())
                                        .rootCause()
                                        .isInstanceOf(InvalidRedleasePropertyException.class)
                                        .hasMessageContaining("redlease.lifecycle.listeners")
                                        .hasMessageContaining("ordres"));
    }

    /** Injects the main election's elector. */
    record ElectorUser(Elector elector) {}

    @Test
    void anElectorInjectionPointFailsWithAReportNamingTheSwitch() {
        contextRunner
                .withBean(ElectorUser.class)
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            FailureAnalysis analysis =
                                    new DisabledElectorFailureAnalyzer(environment("false"))
                                            .analyze(context.getStartupFailure());
                            assertThat(analysis).isNotNull();
                            assertThat(analysis.getDescription())
                                    .contains("required an io.redlease.core.Elector")
                                    .contains("redlease.enabled=false");
                            assertThat(analysis.getAction())
                                    .contains("Inject io.redlease.core.LeadershipContext");
                        });
    }

    @Test
    void aMissingElectorWithRedleaseEnabledIsLeftToSpringBootsReport() {
        new ApplicationContextRunner()
                .withBean(ElectorUser.class)
                .run(
                        context ->
                                assertThat(
                                                new DisabledElectorFailureAnalyzer(
                                                                environment("true"))
                                                        .analyze(context.getStartupFailure()))
                                        .isNull());
    }
}
