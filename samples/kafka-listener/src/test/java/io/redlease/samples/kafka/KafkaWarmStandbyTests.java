package io.redlease.samples.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

/**
 * Warm standby for a leader-only Kafka container: a follower's consumer factory reaches for the
 * broker before this instance is elected. The consumers' bootstrap address is a proxy in front of
 * the broker that accepts connections and answers nothing, so the test sees a connection and the
 * warm-up, unanswered, ends in a warning; the lease is held by another instance throughout.
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class KafkaWarmStandbyTests {

    private static final KafkaBroker broker = KafkaBroker.shared();

    private RedisServer server;

    private String name;

    private KafkaOrders orders;

    private TcpProxy proxy;

    private ConfigurableApplicationContext follower;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{kafka-standby-" + System.nanoTime() + "}";
        this.orders = new KafkaOrders(broker);
        this.proxy = TcpProxy.start(broker.host(), broker.port());
        proxy.blackhole();
        server.command("SET", name + ":leader", "someone-else", "PX", "600000");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (follower != null) {
            follower.close();
        }
        proxy.close();
        orders.close();
    }

    private ConfigurableApplicationContext follower(String... properties) {
        List<String> arguments =
                new ArrayList<>(
                        List.of(
                                "--spring.main.web-application-type=none",
                                "--spring.data.redis.url=" + server.url(),
                                "--redlease.name=" + name,
                                "--redlease.instance-id=b"));
        arguments.addAll(orders.arguments());
        arguments.add(
                "--spring.kafka.consumer.bootstrap-servers=" + proxy.host() + ":" + proxy.port());
        arguments.addAll(List.of(properties));
        follower =
                SpringApplication.run(
                        KafkaListenerApplication.class, arguments.toArray(String[]::new));
        return follower;
    }

    private static boolean consuming(ConfigurableApplicationContext context) {
        return context.getBean(KafkaListenerEndpointRegistry.class)
                .getListenerContainer("orders")
                .isRunning();
    }

    @Test
    void aFollowersConsumerReachesForTheBrokerBeforeItIsElected(CapturedOutput output) {
        ConfigurableApplicationContext b = follower();

        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(30)))
                .until(() -> proxy.connectionCount() > 0);
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
        assertThat(consuming(b)).isFalse();

        // A broker that does not answer delays neither startup nor the election: a warning.
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(60)))
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

    @Test
    void withoutWarmStandbyAFollowersConsumerDoesNotConnect() {
        ConfigurableApplicationContext b = follower("--redlease.warm-standby=false");

        assertThat(b.getBean(Elector.class).firstOutcome()).isCompletedWithValue(false);
        assertThat(consuming(b)).isFalse();
        assertThat(proxy.connectionCount()).isZero();
    }
}
