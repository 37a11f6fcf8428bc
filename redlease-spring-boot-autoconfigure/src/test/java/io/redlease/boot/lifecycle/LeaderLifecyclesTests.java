package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.event.LeaderLifecycleFailedEvent;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.lifecycle.LifecycleTestApplication.AuditLifecycle;
import io.redlease.boot.lifecycle.LifecycleTestApplication.Consumer;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Leader-only lifecycle beans in applications on a real Redis: not started with the context,
 * started on election in phase order, stopped in reverse, and on a graceful hand-off stopped before
 * the successor starts its own.
 */
@ExtendWith(RedisExtension.class)
class LeaderLifecyclesTests {

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private final List<LeaderLifecycleFailedEvent> failures = new CopyOnWriteArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-lifecycle-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        LifecycleTestApplication.events.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=3s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=300ms",
                                "management.endpoints.web.exposure.include=health,redlease",
                                "management.endpoint.health.show-details=always"));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(LifecycleTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .listeners((ApplicationListener<LeaderLifecycleFailedEvent>) failures::add)
                        .run();
        instances.add(context);
        return context;
    }

    private static Elector elector(ConfigurableApplicationContext context) {
        return context.getBean(Elector.class);
    }

    private static Consumer consumer(ConfigurableApplicationContext context) {
        return context.getBean("consumer", Consumer.class);
    }

    private static List<String> events(String instance) {
        return LifecycleTestApplication.events.stream()
                .filter(event -> event.split(":")[1].equals(instance))
                .toList();
    }

    @Test
    void beansStartOnElectionInPhaseOrderNotWithTheContext() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consumer(a).isRunning());
        assertThat(elector(a).isLeader()).isTrue();
        assertThat(events("a")).containsExactly("start:a:early", "start:a:consumer");

        ConfigurableApplicationContext b = instance("b");
        b.start(); // an explicit start of the context does not start leader-only beans
        assertThat(consumer(b).isRunning()).isFalse();
        assertThat(consumer(b).isAutoStartup()).isFalse();
        assertThat(events("b")).isEmpty();

        LeaderLifecycles lifecycles = a.getBean(LeaderLifecycles.class);
        assertThat(lifecycles.members().get(Elections.DEFAULT))
                .extracting(LeaderLifecycles.Member::name, LeaderLifecycles.Member::running)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("earlyConsumer", true),
                        org.assertj.core.groups.Tuple.tuple("consumer", true));
    }

    @Test
    @SuppressWarnings("unchecked")
    void theEndpointAndHealthShowTheBeansAndWhetherTheyRun() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consumer(a).isRunning());
        ConfigurableApplicationContext b = instance("b");
        RedleaseEndpoint.ElectionDescriptor leader =
                a.getBean(RedleaseEndpoint.class).election("default");
        assertThat(leader.lifecycles())
                .containsExactly(
                        new RedleaseEndpoint.LifecycleDescriptor("earlyConsumer", 5, true),
                        new RedleaseEndpoint.LifecycleDescriptor("consumer", 10, true));
        assertThat(b.getBean(RedleaseEndpoint.class).elections().get("default").lifecycles())
                .extracting(RedleaseEndpoint.LifecycleDescriptor::running)
                .containsExactly(false, false);
        Health health = b.getBean(RedleaseHealthIndicator.class).health();
        Map<String, Object> main = (Map<String, Object>) health.getDetails().get("default");
        assertThat(main.get("lifecycles"))
                .isEqualTo(Map.of("earlyConsumer", false, "consumer", false));
        assertThat(health.getStatus()).isEqualTo(Status.UP);
    }

    @Test
    void aGracefulHandOffStopsThePredecessorsBeansBeforeTheSuccessorStartsItsOwn() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consumer(a).isRunning());
        ConfigurableApplicationContext b = instance("b");
        a.close();
        await().until(() -> consumer(b).isRunning());
        assertThat(LifecycleTestApplication.events)
                .containsExactly(
                        "start:a:early",
                        "start:a:consumer",
                        "stop:a:consumer",
                        "stop:a:early",
                        "start:b:early",
                        "start:b:consumer");
    }

    @Test
    void aResignationStopsTheBeansBeforeTheLeaseIsReleased() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consumer(a).isRunning());
        ConfigurableApplicationContext b = instance("b");
        elector(a).resign();
        List<String> events = LifecycleTestApplication.events;
        // Whoever wins the next term starts its beans only after a's have stopped.
        await().until(() -> events.size() == 6);
        assertThat(events.subList(0, 4))
                .containsExactly(
                        "start:a:early", "start:a:consumer", "stop:a:consumer", "stop:a:early");
        assertThat(events.subList(4, 6)).allMatch(event -> event.startsWith("start:"));
        MeterRegistry meters = a.getBean(MeterRegistry.class);
        assertThat(meters.get("redlease.lifecycle.drain").tag("name", name).timer().count())
                .isEqualTo(1);
    }

    @Test
    void aStoppedAndRestartedContextStartsTheBeansAgainWhenReElected() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consumer(a).isRunning());
        a.stop();
        assertThat(consumer(a).isRunning()).isFalse();
        assertThat(elector(a).isRunning()).isFalse();
        a.start();
        await().until(() -> elector(a).isLeader() && consumer(a).isRunning());
        assertThat(events("a"))
                .containsExactly(
                        "start:a:early",
                        "start:a:consumer",
                        "stop:a:consumer",
                        "stop:a:early",
                        "start:a:early",
                        "start:a:consumer");
    }

    @Test
    void aLostLeaseStopsTheBeansAtOnce() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consumer(a).isRunning());
        server.command("SET", name + ":leader", "intruder", "PX", "60000");
        await().until(() -> events("a").size() == 4);
        assertThat(elector(a).isLeader()).isFalse();
        assertThat(events("a")).endsWith("stop:a:consumer", "stop:a:early");
    }

    @Test
    void aNamedElectionStartsItsOwnBeans() {
        ConfigurableApplicationContext a =
                instance(
                        "a", "test.audit=true", "redlease.elections.audit.name=" + name + ":audit");
        AuditLifecycle audit = a.getBean(AuditLifecycle.class);
        await().until(audit::isRunning);
        a.getBean(Elections.class).get("audit").resign();
        await().until(() -> a.getBean(Elections.class).get("audit").isLeader());
        await().until(audit::isRunning);
        assertThat(a.getBean(LeaderLifecycles.class).members()).containsKeys("default", "audit");
    }

    @Test
    void aBeanThatFailsToStartIsReportedAndTheElectionGoesOn() {
        ConfigurableApplicationContext a = instance("a", "test.failing=true");
        await().until(() -> consumer(a).isRunning());
        await().until(() -> !failures.isEmpty());
        assertThat(failures.get(0).getMember()).isEqualTo("failingLifecycle");
        assertThat(failures.get(0).getAction()).isEqualTo(LeaderLifecycles.Action.START);
        await().until(() -> elector(a).isLeader() && consumer(a).isRunning());
        MeterRegistry meters = a.getBean(MeterRegistry.class);
        await().until(
                        () ->
                                meters.get("redlease.lifecycle.failures")
                                                .tags("name", name, "action", "start")
                                                .counter()
                                                .count()
                                        >= 1);
    }

    @Test
    void aLeaderOnlyBeanOfAnUnknownElectionFailsStartup() {
        assertThatException()
                .isThrownBy(() -> instance("a", "test.audit=true"))
                .withStackTraceContaining("@LeaderOnly(\"audit\") on the lifecycle bean")
                .withStackTraceContaining("auditLifecycle");
    }

    @Test
    void anUnknownListenerIdFailsStartupNamingTheProperty() {
        assertThatException()
                .isThrownBy(() -> instance("a", "redlease.lifecycle.listeners=orders"))
                .withStackTraceContaining("redlease.lifecycle.listeners")
                .withStackTraceContaining("no listener endpoint registry to look 'orders' up in");
        Duration.ZERO.isZero();
    }
}
