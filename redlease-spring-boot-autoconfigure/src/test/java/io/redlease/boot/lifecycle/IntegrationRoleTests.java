package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.support.SmartLifecycleRoleController;

/**
 * Spring Integration's role controller follows redlease leadership: an inbound endpoint with
 * {@code @Role("leader")} polls on the leader only and moves with leadership.
 */
@ExtendWith(RedisExtension.class)
class IntegrationRoleTests {

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private final List<OnGrantedEvent> granted = new CopyOnWriteArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-integration-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        IntegrationTestApplication.polls.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(IntegrationTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=3s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=300ms")
                        .listeners((ApplicationListener<OnGrantedEvent>) granted::add)
                        .run();
        instances.add(context);
        return context;
    }

    private static SmartLifecycleRoleController roles(ConfigurableApplicationContext context) {
        return context.getBean(SmartLifecycleRoleController.class);
    }

    private static boolean polling(ConfigurableApplicationContext context) {
        return roles(context).allEndpointsRunning("leader");
    }

    @Test
    void aRoleEndpointRunsOnTheLeaderOnlyAndMovesWithLeadership() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> polling(a));
        ConfigurableApplicationContext b = instance("b");
        assertThat(roles(b).noEndpointsRunning("leader")).isTrue();
        await().until(() -> IntegrationTestApplication.polls.contains("a"));
        assertThat(IntegrationTestApplication.polls).doesNotContain("b");

        a.close();
        await().until(() -> polling(b));
        await().until(() -> IntegrationTestApplication.polls.contains("b"));
    }

    @Test
    void yieldingTheContextResigns() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> polling(a));
        OnGrantedEvent event = granted.get(0);
        assertThat(event.getRole()).isEqualTo("leader");
        assertThat(event.getContext().isLeader()).isTrue();
        long token = a.getBean(Elector.class).token().orElseThrow();
        event.getContext().yield();
        await().until(() -> a.getBean(Elector.class).token().orElse(token) != token && polling(a));
        assertThat(granted).hasSizeGreaterThanOrEqualTo(2);
    }
}
