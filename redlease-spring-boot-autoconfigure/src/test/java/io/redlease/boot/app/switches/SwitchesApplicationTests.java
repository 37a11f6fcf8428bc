package io.redlease.boot.app.switches;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.app.switches.SkippedJobApplication.SkippedJob;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeadershipContext;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Switches and mistakes as a user meets them, in real applications on a real Redis: the off switch,
 * the auto-configuration backing off, a misspelt key, a follower's skipped runs.
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class SwitchesApplicationTests {

    /** Bounds waits for startup and elections on a loaded machine; they end once met. */
    private static final Duration WAIT = Duration.ofMinutes(1);

    private static SpringApplicationBuilder app(Class<?> type, RedisServer server) {
        return new SpringApplicationBuilder(type)
                .web(WebApplicationType.NONE)
                .properties(
                        "spring.data.redis.url=" + server.url(),
                        "test.redis.port=" + server.port());
    }

    private static String name() {
        return "{switches-" + System.nanoTime() + "}";
    }

    @Test
    void theQuickStartApplicationStartsWithTheSwitchOffAndItsJobRunsHere(
            RedisServer server, CapturedOutput output) {
        try (ConfigurableApplicationContext context =
                app(QuickStartApplication.class, server)
                        .run("--redlease.name=" + name(), "--redlease.enabled=false")) {
            // The job runs on this instance; its requireFencer() refuses, naming the switch.
            await().atMost(WAIT)
                    .until(
                            () ->
                                    output.toString()
                                            .contains(
                                                    "redlease: no fencer: leader election is"
                                                            + " disabled (redlease.enabled=false)"));
            LeadershipContext leadership = context.getBean(LeadershipContext.class);
            assertThat(leadership.isLeader()).isFalse();
            assertThat(leadership.token()).isEmpty();
            assertThat(leadership.fencer()).isEmpty();
            assertThat(output)
                    .contains("redlease.enabled=false: @LeaderOnly is not applied")
                    .contains(ReportJob.class.getName() + ".publish");
        }
        assertThat(output).doesNotContain("could not be found");
    }

    @Test
    void healthGroupsThatNameRedleasesIndicatorsKeepWorkingWithTheSwitchOff(RedisServer server) {
        try (ConfigurableApplicationContext context =
                app(QuickStartApplication.class, server)
                        .run(
                                "--redlease.name=" + name(),
                                "--redlease.enabled=false",
                                "--redlease.health.leader.enabled=true",
                                "--management.endpoint.health.group.leader.include=redleaseLeader",
                                "--management.endpoint.health.group.custom.include=ping,redlease",
                                "--management.endpoint.health.show-details=always")) {
            HealthEndpoint health = context.getBean(HealthEndpoint.class);
            assertThat(health.healthForPath("redlease").getStatus()).isEqualTo(Status.UP);
            assertThat(health.healthForPath("redleaseLeader").getStatus()).isEqualTo(Status.UP);
            assertThat(((IndicatedHealthDescriptor) health.healthForPath("redlease")).getDetails())
                    .containsEntry("enabled", false);
        }
    }

    @Test
    void twoRedisConnectionFactoriesWithoutAPrimaryFailStartupWithTheReasonAndTheFix(
            RedisServer server, CapturedOutput output) {
        assertThatException()
                .isThrownBy(
                        () ->
                                app(TwoRedisApplication.class, server)
                                        .run("--redlease.name=" + name()));
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains(
                        "2 RedisConnectionFactory beans (first, second) and none is marked @Primary")
                .contains("Mark the RedisConnectionFactory that redlease should use @Primary")
                .contains("set redlease.enabled=false")
                .doesNotContain("could not be found");
    }

    @Test
    void noRedisConnectionFactoryFailsStartupWithTheReasonAndTheFix(
            RedisServer server, CapturedOutput output) {
        assertThatException()
                .isThrownBy(
                        () ->
                                app(QuickStartApplication.class, server)
                                        .run(
                                                "--redlease.name=" + name(),
                                                "--spring.autoconfigure.exclude=org.springframework"
                                                        + ".boot.data.redis.autoconfigure"
                                                        + ".DataRedisAutoConfiguration"));
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("the application has no RedisConnectionFactory bean")
                .contains("set redlease.enabled=false")
                .doesNotContain("could not be found");
    }

    @Test
    void anElectorInjectedWithTheSwitchOffIsReportedNamingTheSwitch(
            RedisServer server, CapturedOutput output) {
        assertThatException()
                .isThrownBy(
                        () ->
                                app(ElectorUserApplication.class, server)
                                        .run(
                                                "--redlease.name=" + name(),
                                                "--redlease.enabled=false"));
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains(
                        "required an io.redlease.core.Elector, but leader election is disabled"
                                + " (redlease.enabled=false)")
                .contains("Inject io.redlease.core.LeadershipContext instead");
    }

    @Test
    void aMisspeltKeyIsNamedOnceWithTheNearestKnownOne(RedisServer server, CapturedOutput output) {
        try (ConfigurableApplicationContext context =
                app(QuickStartApplication.class, server)
                        .run(
                                "--redlease.name=" + name(),
                                "--redlease.tll=2s",
                                "--redlease.renew-interval=600ms",
                                "--redlease.elections.audit.name=" + name(),
                                "--redlease.elections.audit.lifecycle.listeners=",
                                "--redlease.discovery.attributes.region=eu",
                                "--redlease.scheduling.missed-slots=SKIP")) {
            assertThat(context.getBean(Elector.class).config().ttl())
                    .as("the misspelt key is ignored")
                    .isEqualTo(Duration.ofSeconds(5));
        }
        assertThat(output.toString().lines().filter(line -> line.contains("unknown property")))
                .singleElement()
                .asString()
                .contains("WARN")
                .contains("unknown property 'redlease.tll'")
                .contains("commandLineArgs")
                .contains("did you mean 'redlease.ttl'?");
    }

    @Test
    void aFollowersSkippedScheduledRunsAreLoggedAndCounted(
            RedisServer server, CapturedOutput output) {
        String name = name();
        LettuceConnectionFactory connections =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        connections.afterPropertiesSet();
        Elector holder =
                new Elector(
                        new StringRedisTemplate(connections),
                        ElectorConfig.builder(name).instanceId("holder").build());
        try {
            holder.start();
            await().atMost(WAIT).until(holder::isLeader);
            try (ConfigurableApplicationContext context =
                    app(SkippedJobApplication.class, server)
                            .run(
                                    "--redlease.name=" + name,
                                    "--logging.level.io.redlease.core.annotation.LeaderOnly=DEBUG")) {
                MeterRegistry registry = context.getBean(MeterRegistry.class);
                await().atMost(WAIT)
                        .until(
                                () -> {
                                    Counter counter =
                                            registry.find("redlease.leaderonly.skipped")
                                                    .tag("name", name)
                                                    .tag("method", "SkippedJob.run")
                                                    .counter();
                                    return counter != null && counter.count() >= 3;
                                });
                assertThat(context.getBean(SkippedJob.class).runs()).isZero();
                assertThat(holder.isLeader()).isTrue();
                assertThat(
                                registry.find("redlease.leaderonly.skipped")
                                        .counter()
                                        .getId()
                                        .getDescription())
                        .isNotBlank();
            }
        } finally {
            holder.close();
            connections.destroy();
        }
        assertThat(output)
                .contains(
                        "redlease: skipped SkippedJob.run(): this instance does not lead '"
                                + name
                                + "' (yet)");
    }
}
