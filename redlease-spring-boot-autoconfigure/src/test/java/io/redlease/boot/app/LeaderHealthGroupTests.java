package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.health.RedleaseLeaderHealthIndicator;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Leadership stays out of overall health, readiness and liveness: by default there is no leader
 * indicator at all; the opt-in {@code redleaseLeader} indicator answers only in a group of its own.
 */
@ExtendWith(RedisExtension.class)
class LeaderHealthGroupTests {

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private final String name = "redlease-health-group:" + System.nanoTime();

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, String... extra) {
        List<String> properties =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "management.endpoints.web.exposure.include=health",
                                "management.endpoint.health.probes.enabled=true",
                                "management.endpoint.health.probes.add-additional-paths=true",
                                "management.endpoint.health.show-details=always"));
        properties.addAll(List.of(extra));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(properties.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    private static Status status(ConfigurableApplicationContext context, String... path) {
        HealthEndpoint health = context.getBean(HealthEndpoint.class);
        HealthDescriptor descriptor =
                path.length == 0 ? health.health() : health.healthForPath(path);
        return descriptor.getStatus();
    }

    @Test
    void byDefaultNoIndicatorDependsOnLeadership() {
        ConfigurableApplicationContext leader = instance("a");
        await().until(leader.getBean(Elector.class)::isLeader);
        ConfigurableApplicationContext follower = instance("b");
        assertThat(follower.getBean(Elector.class).isLeader()).isFalse();
        assertThat(follower.getBeanNamesForType(RedleaseLeaderHealthIndicator.class)).isEmpty();
        for (ConfigurableApplicationContext context : List.of(leader, follower)) {
            assertThat(status(context)).isEqualTo(Status.UP);
            assertThat(status(context, "readiness")).isEqualTo(Status.UP);
            assertThat(status(context, "liveness")).isEqualTo(Status.UP);
        }
    }

    @Test
    void theOptInIndicatorAnswersInItsOwnGroupWithoutLoweringOverallHealth() {
        String[] leaderGroup = {
            "redlease.health.leader.enabled=true",
            "management.endpoint.health.group.leader.include=redleaseLeader",
            "management.endpoint.health.group.leader.status.order=follower,up",
            "management.endpoint.health.group.leader.status.http-mapping.follower=503"
        };
        ConfigurableApplicationContext leader = instance("a", leaderGroup);
        await().until(leader.getBean(Elector.class)::isLeader);
        ConfigurableApplicationContext follower = instance("b", leaderGroup);
        assertThat(status(leader, "leader")).isEqualTo(Status.UP);
        assertThat(status(follower, "leader").getCode())
                .isEqualTo(RedleaseLeaderHealthIndicator.FOLLOWER);
        for (ConfigurableApplicationContext context : List.of(leader, follower)) {
            assertThat(status(context)).isEqualTo(Status.UP);
            assertThat(status(context, "readiness")).isEqualTo(Status.UP);
            assertThat(status(context, "liveness")).isEqualTo(Status.UP);
        }
    }

    @Test
    void anUnknownElectionFailsStartupNamingTheProperty() {
        assertThatThrownBy(
                        () ->
                                instance(
                                        "c",
                                        "redlease.health.leader.enabled=true",
                                        "redlease.health.leader.election=nope"))
                .hasRootCauseInstanceOf(InvalidConfigurationPropertyValueException.class)
                .rootCause()
                .hasMessageContaining("redlease.health.leader.election")
                .hasMessageContaining("no election has this id");
    }
}
