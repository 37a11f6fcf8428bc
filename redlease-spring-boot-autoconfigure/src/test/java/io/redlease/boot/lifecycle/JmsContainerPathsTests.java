package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.ArtemisServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import jakarta.jms.Session;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jms.config.JmsListenerEndpointRegistry;
import org.springframework.jms.core.JmsTemplate;

/**
 * Leader-only JMS containers on Spring paths other than Boot's factory, on a real Artemis broker
 * and a real Redis: a container declared as a {@code @LeaderOnly} bean, and a {@code
 * SimpleMessageListenerContainer}.
 */
@ExtendWith(RedisExtension.class)
class JmsContainerPathsTests {

    private static final ArtemisServer artemis = ArtemisServer.shared();

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    private String queue;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-jms-paths-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.queue = artemis.newQueue("orders");
        JmsContainerPathsApplication.consumed.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
        artemis.deleteQueue(queue);
    }

    private ConfigurableApplicationContext instance(String id, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id + "-" + queue,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "test.artemis.url=" + artemis.url(),
                                "test.queue=" + queue));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(JmsContainerPathsApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    private List<String> consumedBy(String id) {
        return JmsContainerPathsApplication.consumed.stream()
                .filter(entry -> entry.startsWith(id + "-" + queue + ":"))
                .toList();
    }

    private void send(ConfigurableApplicationContext context, int from, int to) {
        JmsTemplate template = context.getBean(JmsTemplate.class);
        IntStream.range(from, to).forEach(i -> template.convertAndSend(queue, "m" + i));
    }

    /**
     * A {@code @LeaderOnly} DefaultMessageListenerContainer bean with Spring's defaults (not
     * transacted, AUTO_ACKNOWLEDGE) acknowledges a message whose listener threw: refused as the
     * same container named in redlease.lifecycle.listeners is.
     */
    @Test
    void aLeaderOnlyContainerBeanThatWouldAcknowledgeARefusedMessageIsRefused() {
        assertThatException()
                .isThrownBy(() -> instance("a", "test.path=bean", "redlease.auto-startup=false"))
                .withStackTraceContaining(
                        "the JMS listener container 'ordersContainer' is not transacted and"
                                + " acknowledges in mode AUTO_ACKNOWLEDGE");
    }

    /**
     * A {@code @LeaderOnly} container bean in CLIENT_ACKNOWLEDGE mode is accepted, consumes on the
     * leader only and moves with leadership; redlease sees it running although its final {@code
     * isRunning()} does not reach it through the proxy.
     */
    @Test
    void aLeaderOnlyContainerBeanThatRedeliversMovesWithLeadership() {
        String mode = "test.acknowledge-mode=" + Session.CLIENT_ACKNOWLEDGE;
        ConfigurableApplicationContext a = instance("a", "test.path=bean", mode);
        send(a, 0, 5);
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> consumedBy("a").size() == 5);
        ConfigurableApplicationContext b = instance("b", "test.path=bean", mode);
        assertThat(
                        a.getBean(LeaderLifecycles.class)
                                .members()
                                .get(io.redlease.core.Elections.DEFAULT))
                .extracting(LeaderLifecycles.Member::name)
                .containsExactly("ordersContainer");

        a.getBean(Elector.class).stop();
        await().until(() -> b.getBean(Elector.class).isLeader());
        send(b, 5, 10);
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> consumedBy("b").size() == 5);
        assertThat(consumedBy("a")).hasSize(5);
    }

    /**
     * A follower's SimpleMessageListenerContainer must not take messages from the queue, and a
     * stopped leader's must not keep the ones it had buffered from its successor.
     */
    @Test
    void aSimpleContainerMovesWithLeadershipAndHoldsNoMessages() {
        ConfigurableApplicationContext a =
                instance("a", "test.path=simple", "redlease.lifecycle.listeners=orders");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b =
                instance("b", "test.path=simple", "redlease.lifecycle.listeners=orders");
        assertThat(consuming(b)).isFalse();
        send(b, 0, 20);
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> consumedBy("a").size() == 20);
        assertThat(consumedBy("b")).isEmpty();

        a.getBean(Elector.class).stop();
        await().until(() -> consuming(b));
        assertThat(consuming(a)).isFalse();
        send(b, 20, 40);
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .untilAsserted(() -> assertThat(consumedBy("b")).hasSize(20));
        assertThat(consumedBy("a")).hasSize(20);
    }

    /**
     * A listener container named in a child context's redlease.lifecycle.listeners, the parent
     * leading: registered in the parent's election after its term started, it would not start in
     * that term (and would stay registered after the child closed), so it is refused.
     */
    @Test
    void aChildContextsListenerIsRefused() {
        String[] properties = {
            "spring.data.redis.url=" + server.url(),
            "redlease.name=" + name,
            "redlease.instance-id=a-" + queue,
            "redlease.ttl=1s",
            "redlease.renew-interval=100ms",
            "redlease.acquire-interval=200ms",
            "test.artemis.url=" + artemis.url(),
            "test.queue=" + queue
        };
        SpringApplicationBuilder parent =
                new SpringApplicationBuilder(JmsContainerPathsApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(properties);
        ConfigurableApplicationContext a = parent.run();
        instances.add(a);
        await().until(() -> a.getBean(Elector.class).isLeader());
        assertThatException()
                .isThrownBy(
                        () ->
                                parent.child(JmsChildApplication.class)
                                        .web(WebApplicationType.NONE)
                                        .properties(properties)
                                        .properties("redlease.lifecycle.listeners=orders")
                                        .run())
                .withStackTraceContaining(
                        "leader-only lifecycles [orders] are declared in a child context");
    }

    /** Explicit starts of the registry and of the context leave a follower's container stopped. */
    @Test
    void explicitStartsLeaveAFollowersContainerStopped() {
        ConfigurableApplicationContext a =
                instance(
                        "a",
                        "test.path=simple",
                        "redlease.lifecycle.listeners=orders",
                        "redlease.auto-startup=false");
        a.getBean(JmsListenerEndpointRegistry.class).start();
        assertThat(consuming(a)).isFalse();
        a.start();
        assertThat(consuming(a)).isFalse();
    }

    private static boolean consuming(ConfigurableApplicationContext context) {
        return context.getBean(JmsListenerEndpointRegistry.class)
                .getListenerContainer("orders")
                .isRunning();
    }
}
