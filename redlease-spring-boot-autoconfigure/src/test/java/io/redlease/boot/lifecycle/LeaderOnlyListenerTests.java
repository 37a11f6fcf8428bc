package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A RabbitMQ listener container named in {@code redlease.lifecycle.listeners}, on a real broker and
 * a real Redis: it consumes on the leader only and moves with leadership.
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class LeaderOnlyListenerTests {

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    private String virtualHost;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-listener-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.virtualHost = rabbit.newVirtualHost();
        RabbitTestApplication.consumed.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
        rabbit.deleteVirtualHost(virtualHost);
    }

    private ConfigurableApplicationContext instance(String id, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.lifecycle.listeners=orders",
                                "test.rabbit.host=" + rabbit.host(),
                                "test.rabbit.port=" + rabbit.port(),
                                "test.rabbit.virtual-host=" + virtualHost));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(RabbitTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    /** A container that would lose a message whose listener threw is refused, naming the fix. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({
        "test.rabbit.acknowledge-mode=NONE, acknowledges in mode NONE",
        "test.rabbit.requeue-rejected=false, does not requeue a message whose listener throws"
    })
    void aContainerThatWouldLoseARefusedMessageIsRefused(String setting, String named) {
        org.assertj.core.api.Assertions.assertThatException()
                .isThrownBy(() -> instance("a", "redlease.auto-startup=false", setting))
                .withStackTraceContaining(
                        "redlease: the RabbitMQ listener container 'orders' " + named);
    }

    /** The same for a container declared as a @LeaderOnly bean. */
    @Test
    void aLeaderOnlyContainerBeanThatWouldLoseARefusedMessageIsRefused() {
        org.assertj.core.api.Assertions.assertThatException()
                .isThrownBy(
                        () ->
                                instance(
                                        "a",
                                        "redlease.auto-startup=false",
                                        "test.bean-container=true"))
                .withStackTraceContaining(
                        "redlease: the RabbitMQ listener container 'beanContainer' acknowledges in"
                                + " mode NONE");
    }

    private static boolean consuming(ConfigurableApplicationContext context) {
        return context.getBean(RabbitListenerEndpointRegistry.class)
                .getListenerContainer("orders")
                .isRunning();
    }

    private static void send(ConfigurableApplicationContext context, int from, int to) {
        RabbitTemplate template = context.getBean(RabbitTemplate.class);
        IntStream.range(from, to).forEach(i -> template.convertAndSend("orders", "m" + i));
    }

    private static List<String> consumedBy(String instance) {
        return RabbitTestApplication.consumed.stream()
                .filter(entry -> entry.startsWith(instance + ":"))
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
        await().until(() -> RabbitTestApplication.consumed.size() == 40);
        assertThat(consumedBy("b")).hasSize(20);
        assertThat(RabbitTestApplication.consumed.stream().map(e -> e.split(":")[1]).distinct())
                .hasSize(40);
    }

    @Test
    void anUnknownListenerIdFailsStartupNamingTheRegistriesSearched() {
        assertThatException()
                .isThrownBy(() -> instance("a", "redlease.lifecycle.listeners=orders,invoices"))
                .withStackTraceContaining("redlease.lifecycle.listeners")
                .withStackTraceContaining(
                        "no listener container has the id 'invoices' in"
                                + " RabbitListenerEndpointRegistry");
    }

    @Test
    void aListenerThatStartsWithTheApplicationIsRefused() {
        assertThatException()
                .isThrownBy(
                        () ->
                                instance(
                                        "a",
                                        "test.auto-listener=true",
                                        "redlease.lifecycle.listeners=orders,auto"))
                .withStackTraceContaining("redlease.lifecycle.listeners")
                .withStackTraceContaining("'auto' starts with the application");
    }

    private static boolean brokerConnectionOpen(ConfigurableApplicationContext context) {
        String localPort =
                context.getBean(CachingConnectionFactory.class)
                        .getCacheProperties()
                        .getProperty("localPort", "0");
        return !"0".equals(localPort);
    }

    @Test
    void aFollowersListenerConnectionIsOpenBeforeItIsElected() {
        ConfigurableApplicationContext a = instance("a");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b");

        // Warm standby: the follower's container is stopped but its broker connection is open.
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> brokerConnectionOpen(b));
        assertThat(consuming(b)).isFalse();
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
    }

    /**
     * A follower's first connection makes the application's RabbitAdmin declare every queue: an
     * exclusive one would then belong to the follower's connection, and the leader could not
     * declare or consume it. Warm standby is skipped then, with a WARN naming the queue.
     */
    @Test
    void anApplicationWithAnExclusiveQueueHasNoWarmStandby(CapturedOutput output) {
        ConfigurableApplicationContext a = instance("a", "test.exclusive-queue=true");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b", "test.exclusive-queue=true");
        assertThat(b.getBean(Elector.class).firstOutcome()).isCompletedWithValue(false);

        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> output.getOut().contains("declares the exclusive queue(s) [replies]"));
        // Its own RabbitMQ warm-up made no attempt (output capture is the JVM's: a warm-up of an
        // earlier test's Kafka container, still waiting on its broker, may log here).
        assertThat(
                        output.getOut()
                                .lines()
                                .filter(
                                        line ->
                                                line.contains(
                                                        "could not open the broker connection"))
                                .filter(line -> line.toLowerCase(Locale.ROOT).contains("amqp")))
                .isEmpty();
        assertThat(brokerConnectionOpen(b)).isFalse();
        a.close();
        await().until(() -> consuming(b));
    }

    /** An exclusive queue named per application locks no other instance out. */
    @Test
    void anExclusiveQueueNamedPerApplicationKeepsWarmStandby() {
        ConfigurableApplicationContext a = instance("a", "test.anonymous-queue=true");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b", "test.anonymous-queue=true");
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(20)))
                .until(() -> brokerConnectionOpen(b));
        assertThat(consuming(b)).isFalse();
    }

    @Test
    void withoutWarmStandbyAFollowerConnectsWhenElected() {
        ConfigurableApplicationContext a = instance("a", "redlease.warm-standby=false");
        await().until(() -> consuming(a));
        ConfigurableApplicationContext b = instance("b", "redlease.warm-standby=false");
        assertThat(b.getBean(Elector.class).firstOutcome()).isCompletedWithValue(false);

        assertThat(brokerConnectionOpen(b)).isFalse();
        a.close();
        await().until(() -> consuming(b));
        assertThat(brokerConnectionOpen(b)).isTrue();
    }

    @Test
    void aBrokerThatCannotBeReachedAheadOfElectionIsAWarningNotAFailure(CapturedOutput output) {
        server.command("SET", name + ":leader", "someone-else", "PX", "600000");
        ConfigurableApplicationContext b = instance("b", "test.rabbit.port=" + closedPort());

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

    private static int closedPort() {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
