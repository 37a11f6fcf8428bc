package io.redlease.samples.listener;

import static io.redlease.test.AppNodes.after;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * The sample as configured (no web server, no {@code spring.main.keep-alive}), in JVMs of its own
 * on a real RabbitMQ and Redis: a follower, whose only work is the leader-only listener, stays up
 * as a standby and takes over the queue when the leader crashes.
 */
@ExtendWith(RedisExtension.class)
class FollowerStandbyTests {

    private static final Duration WAIT = Duration.ofMinutes(2);

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    private RedisServer server;

    private String name;

    private String virtualHost;

    private CachingConnectionFactory rabbitFactory;

    private AppNodes nodes;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{standby-" + System.nanoTime() + "}";
        this.virtualHost = rabbit.newVirtualHost();
        this.rabbitFactory = new CachingConnectionFactory(rabbit.host(), rabbit.port());
        rabbitFactory.setUsername(rabbit.username());
        rabbitFactory.setPassword(rabbit.password());
        rabbitFactory.setVirtualHost(virtualHost);
        new RabbitAdmin(rabbitFactory).declareQueue(new Queue(ListenerApplication.QUEUE));
        this.nodes =
                new AppNodes(
                        ListenerApplication.class,
                        this::arguments,
                        Path.of("target", "follower-standby-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        nodes.close();
        rabbitFactory.destroy();
        rabbit.deleteVirtualHost(virtualHost);
    }

    private List<String> arguments(String id) {
        return List.of(
                "--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off",
                "--spring.data.redis.url=" + server.url(),
                "--spring.rabbitmq.host=" + rabbit.host(),
                "--spring.rabbitmq.port=" + rabbit.port(),
                "--spring.rabbitmq.username=" + rabbit.username(),
                "--spring.rabbitmq.password=" + rabbit.password(),
                "--spring.rabbitmq.virtual-host=" + virtualHost,
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=2s",
                "--logging.level.root=WARN",
                "--logging.level.io.redlease.samples.demo=INFO",
                "--logging.pattern.console=%level %m%n");
    }

    private static Predicate<Event> by(String node) {
        return event -> event.node().equals(node);
    }

    @Test
    void aFollowerWithoutAWebServerStaysUpAndTakesOverWhenTheLeaderCrashes() throws Exception {
        RabbitTemplate orders = new RabbitTemplate(rabbitFactory);
        long begin = System.currentTimeMillis();
        nodes.start("a");
        orders.convertAndSend(ListenerApplication.QUEUE, "o1");
        nodes.await(after(begin, "consumed").and(by("a")), WAIT);
        nodes.start("b");
        nodes.await(after(begin, "ready").and(by("b")), WAIT);

        // Only a standby that is still running can be elected and consume once the leader is gone.
        long killed = System.currentTimeMillis();
        nodes.signal("a", "KILL");
        orders.convertAndSend(ListenerApplication.QUEUE, "o2");
        nodes.await(after(killed, "elected").and(by("b")), WAIT);
        nodes.await(after(killed, "consumed").and(by("b")), WAIT);
    }
}
