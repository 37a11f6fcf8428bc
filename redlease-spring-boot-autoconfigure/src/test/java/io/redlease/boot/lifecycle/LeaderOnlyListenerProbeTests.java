package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Review probes: a leader-only RabbitMQ listener container must not be started on an instance that
 * does not lead by an explicit start of the context or of the listener registry.
 */
@ExtendWith(RedisExtension.class)
class LeaderOnlyListenerProbeTests {

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    private String virtualHost;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-listener-probe:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.virtualHost = rabbit.newVirtualHost();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
        rabbit.deleteVirtualHost(virtualHost);
    }

    private ConfigurableApplicationContext instance(String id) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(RabbitTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=3s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=300ms",
                                "redlease.lifecycle.listeners=orders",
                                "test.rabbit.host=" + rabbit.host(),
                                "test.rabbit.port=" + rabbit.port(),
                                "test.rabbit.virtual-host=" + virtualHost)
                        .run();
        instances.add(context);
        return context;
    }

    private static boolean consuming(ConfigurableApplicationContext context) {
        return context.getBean(RabbitListenerEndpointRegistry.class)
                .getListenerContainer("orders")
                .isRunning();
    }

    @Test
    void anExplicitContextStartDoesNotStartTheListenerOnANonLeader() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b");
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
        b.start();
        assertThat(consuming(b)).as("non-leader's container after context.start()").isFalse();
    }

    @Test
    void aRegistryStartDoesNotStartTheListenerOnANonLeader() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b");
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
        RabbitListenerEndpointRegistry registry = b.getBean(RabbitListenerEndpointRegistry.class);
        registry.stop();
        registry.start();
        assertThat(consuming(b)).as("non-leader's container after registry.start()").isFalse();
        // the leader's container still follows the term
        a.getBean(RabbitListenerEndpointRegistry.class).stop();
        a.getBean(RabbitListenerEndpointRegistry.class).start();
        assertThat(a.getBean(Elector.class).isLeader()).isTrue();
    }
}
