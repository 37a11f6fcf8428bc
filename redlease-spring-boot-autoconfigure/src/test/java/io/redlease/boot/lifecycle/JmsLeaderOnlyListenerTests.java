package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jms.config.JmsListenerEndpointRegistry;
import org.springframework.jms.core.JmsTemplate;

/**
 * A JMS listener container named in {@code redlease.lifecycle.listeners}, on a real Artemis broker
 * and a real Redis: it consumes on the leader only, moves with leadership, is refused when its
 * acknowledgement would lose a message whose listener threw, and a follower's JMS client is
 * connected once before it is elected (warm standby).
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class JmsLeaderOnlyListenerTests {

    private static final ArtemisServer artemis = ArtemisServer.shared();

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    private String queue;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-jms-listener-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.queue = artemis.newQueue("orders");
        JmsTestApplication.consumed.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
        artemis.deleteQueue(queue);
    }

    /** Starts an instance that logs in to the broker as a user of its own. */
    private ConfigurableApplicationContext instance(String id, String... properties) {
        return start(id, artemis.url(), properties);
    }

    private ConfigurableApplicationContext start(String id, String url, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + user(id),
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.lifecycle.listeners=orders",
                                "test.artemis.url=" + url,
                                "test.queue=" + queue));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(JmsTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    /** The instance id, and the broker user of its connections: unique to the test. */
    private String user(String id) {
        return id + "-" + queue;
    }

    private static boolean consuming(ConfigurableApplicationContext context) {
        return context.getBean(JmsListenerEndpointRegistry.class)
                .getListenerContainer("orders")
                .isRunning();
    }

    private void send(ConfigurableApplicationContext context, int from, int to) {
        JmsTemplate template = context.getBean(JmsTemplate.class);
        IntStream.range(from, to).forEach(i -> template.convertAndSend(queue, "m" + i));
    }

    private List<String> consumedBy(String id) {
        return JmsTestApplication.consumed.stream()
                .filter(entry -> entry.startsWith(user(id) + ":"))
                .toList();
    }

    @Test
    void onlyTheLeaderConsumesAndTheListenerMovesWithLeadership() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b");
        assertThat(consuming(b)).isFalse();
        assertThat(a.getBean(Elector.class).isLeader()).isTrue();
        send(b, 0, 20);
        await().until(() -> consumedBy("a").size() == 20);
        a.close();
        await().until(() -> consuming(b));
        send(b, 20, 40);
        await().until(() -> JmsTestApplication.consumed.size() == 40);
        assertThat(consumedBy("b")).hasSize(20);
        assertThat(JmsTestApplication.consumed.stream().map(e -> e.split(":")[1]).distinct())
                .hasSize(40);
    }

    @Test
    void aContainerThatStartsWithTheApplicationIsRefusedNamingTheFactorysSetting() {
        assertThatException()
                .isThrownBy(() -> instance("a", "test.auto-startup=true"))
                .withStackTraceContaining(
                        "the JMS listener container 'orders' starts with the application")
                .withStackTraceContaining("spring.jms.listener.auto-startup=false");
    }

    @ParameterizedTest
    @CsvSource({
        Session.AUTO_ACKNOWLEDGE + ", none, 'AUTO_ACKNOWLEDGE, so a message whose listener throws'",
        Session.DUPS_OK_ACKNOWLEDGE
                + ", none, 'DUPS_OK_ACKNOWLEDGE, so a message whose listener throws'",
        "100, none, '100 (a vendor''s own mode, which redlease cannot check), so a message whose"
                + " listener throws (a write refused by the fence) may be acknowledged'",
        Session.AUTO_ACKNOWLEDGE + ", other, 'AUTO_ACKNOWLEDGE, so a message whose listener throws'"
    })
    void aContainerThatWouldAcknowledgeARefusedMessageIsRefused(
            int mode, String manager, String named) {
        assertThatException()
                .isThrownBy(
                        () ->
                                instance(
                                        "a",
                                        "test.transacted=false",
                                        "test.acknowledge-mode=" + mode,
                                        "test.transaction-manager=" + manager))
                .withStackTraceContaining(
                        "redlease: the JMS listener container 'orders' is not transacted and"
                                + " acknowledges in mode "
                                + named)
                .withStackTraceContaining("spring.jms.listener.session.transacted=true");
    }

    @ParameterizedTest
    @CsvSource({
        "true, " + Session.AUTO_ACKNOWLEDGE + ", none",
        "false, " + Session.CLIENT_ACKNOWLEDGE + ", none",
        "false, " + Session.AUTO_ACKNOWLEDGE + ", jta"
    })
    void aContainerThatRedeliversARefusedMessageIsLeaderOnly(
            boolean transacted, int mode, String manager) {
        ConfigurableApplicationContext a =
                instance(
                        "a",
                        "redlease.auto-startup=false",
                        "test.transacted=" + transacted,
                        "test.acknowledge-mode=" + mode,
                        "test.transaction-manager=" + manager);
        assertThat(a.getBean(LeaderLifecycles.class).members().get(Elections.DEFAULT))
                .extracting(LeaderLifecycles.Member::name)
                .containsExactly("orders");
        assertThat(consuming(a)).isFalse();
    }

    @Test
    void aFollowersJmsClientConnectsToTheBrokerBeforeItIsElected() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b");

        // Warm standby: the follower's connection factory has opened a connection and a session.
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> artemis.sessionsOpenedBy(user("b")) >= 2);
        assertThat(consuming(b)).isFalse();
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
    }

    /**
     * A connection factory that shares one connection with a client id (as durable subscriptions
     * take) keeps the connection a warm-up opens: the follower would hold the client id, which the
     * broker gives to one connection at a time, and the leader could not connect. Warm standby is
     * skipped then, with a WARN.
     */
    @Test
    void aConnectionFactoryWithAClientIdHasNoWarmStandby(CapturedOutput output) {
        server.command("SET", name + ":leader", "someone-else", "PX", "600000");
        ConfigurableApplicationContext b = instance("b", "test.client-id=orders-" + queue);
        assertThat(b.getBean(Elector.class).firstOutcome()).isCompletedWithValue(false);

        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> output.getOut().contains("it connects with a client id"));
        assertThat(artemis.sessionsOpenedBy(user("b"))).isZero();
    }

    @Test
    void withoutWarmStandbyAFollowerConnectsWhenElected() {
        ConfigurableApplicationContext a = instance("a", "redlease.warm-standby=false");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b", "redlease.warm-standby=false");
        assertThat(b.getBean(Elector.class).firstOutcome()).isCompletedWithValue(false);

        assertThat(artemis.sessionsOpenedBy(user("b"))).isZero();
        a.close();
        await().until(() -> consuming(b));
        await().until(() -> artemis.sessionsOpenedBy(user("b")) > 0);
    }

    @Test
    void aBrokerThatCannotBeReachedAheadOfElectionIsAWarningNotAFailure(CapturedOutput output) {
        server.command("SET", name + ":leader", "someone-else", "PX", "600000");
        ConfigurableApplicationContext b = start("b", "tcp://127.0.0.1:" + closedPort());

        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(
                        () ->
                                output.getOut()
                                        .contains(
                                                "redlease: could not open the broker connection"
                                                        + " of the leader-only listener container"
                                                        + " 'orders' ahead of election"));
        assertThat(b.isActive()).isTrue();
        assertThat(consuming(b)).isFalse();
    }

    /**
     * A broker that takes the TCP connection and never answers (a host that went silent, or a
     * client that retries for ever, such as ActiveMQ's failover transport, behave alike): the
     * warm-up waits in the background, and a WARN says so once the connect timeout has passed.
     */
    @Test
    void aWarmUpThatHasNotConnectedWithinTheConnectTimeoutIsAWarning(CapturedOutput output)
            throws java.io.IOException {
        server.command("SET", name + ":leader", "someone-else", "PX", "600000");
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50)) {
            ConfigurableApplicationContext b =
                    start(
                            "b",
                            "tcp://127.0.0.1:" + silent.getLocalPort(),
                            "redlease.connect-timeout=1s");

            await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                    .until(
                            () ->
                                    output.getOut()
                                            .contains(
                                                    "redlease: the leader-only listener container"
                                                            + " 'orders' has not opened its broker"
                                                            + " connection within 1s"));
            assertThat(b.isActive()).isTrue();
            assertThat(consuming(b)).isFalse();
        }
    }

    private static int closedPort() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
