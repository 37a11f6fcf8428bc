package io.redlease.samples.listener;

import static io.redlease.test.AppNodes.after;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.RabbitMqServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The leader-only listener across real failovers: three copies of the sample in their own JVMs,
 * each with Tomcat and a graceful shutdown, on a real RabbitMQ and a real Redis, orders published
 * throughout, then a graceful hand-off (SIGTERM), a crash (SIGKILL) and a freeze (SIGSTOP) of the
 * leader. At the hand-off the successor consumes only after the predecessor's container stopped;
 * after a crash or a freeze a successor consumes once the lease lapsed; every order is applied
 * exactly once. How long each takes is measured, not asserted: the figures are written to {@code
 * target/listener-failover-figures.txt}.
 */
@ExtendWith(RedisExtension.class)
class ListenerFailoverTests {

    private static final Duration WAIT = Duration.ofMinutes(3);

    private static final long TTL_MILLIS = 2000;

    private static final RabbitMqServer rabbit = RabbitMqServer.shared();

    private RedisServer server;

    private String name;

    private String virtualHost;

    private LettuceConnectionFactory redisFactory;

    private StringRedisTemplate redis;

    private CachingConnectionFactory rabbitFactory;

    private AppNodes nodes;

    private final AtomicBoolean publishing = new AtomicBoolean(true);

    private final AtomicInteger published = new AtomicInteger();

    private Thread publisher;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{orders-" + System.nanoTime() + "}";
        this.virtualHost = rabbit.newVirtualHost();
        this.redisFactory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        redisFactory.afterPropertiesSet();
        this.redis = new StringRedisTemplate(redisFactory);
        this.rabbitFactory = new CachingConnectionFactory(rabbit.host(), rabbit.port());
        rabbitFactory.setUsername(rabbit.username());
        rabbitFactory.setPassword(rabbit.password());
        rabbitFactory.setVirtualHost(virtualHost);
        new RabbitAdmin(rabbitFactory).declareQueue(new Queue(ListenerApplication.QUEUE));
        this.nodes =
                new AppNodes(
                        ListenerApplication.class,
                        this::arguments,
                        Path.of("target", "listener-failover-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        publishing.set(false);
        if (publisher != null) {
            publisher.join();
        }
        nodes.close();
        rabbitFactory.destroy();
        rabbit.deleteVirtualHost(virtualHost);
        redisFactory.destroy();
    }

    private List<String> arguments(String id) {
        return List.of(
                // Tomcat with a graceful drain: leadership is released before the drain.
                "--spring.main.web-application-type=servlet",
                "--server.port=0",
                "--server.shutdown=graceful",
                "--spring.main.banner-mode=off",
                "--spring.data.redis.url=" + server.url(),
                "--spring.rabbitmq.host=" + rabbit.host(),
                "--spring.rabbitmq.port=" + rabbit.port(),
                "--spring.rabbitmq.username=" + rabbit.username(),
                "--spring.rabbitmq.password=" + rabbit.password(),
                "--spring.rabbitmq.virtual-host=" + virtualHost,
                "--spring.rabbitmq.requested-heartbeat=1s",
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=" + TTL_MILLIS + "ms",
                "--redlease.renew-interval=300ms",
                "--redlease.acquire-interval=300ms",
                "--spring.lifecycle.timeout-per-shutdown-phase=10s",
                "--sample.work-millis=20",
                "--logging.level.root=WARN",
                "--logging.level.io.redlease.samples.demo=INFO",
                "--logging.pattern.console=%level %m%n");
    }

    /** Publishes order o0, o1, ... every 10 ms until stopped. */
    private void startPublishing() {
        RabbitTemplate template = new RabbitTemplate(rabbitFactory);
        publisher =
                new Thread(
                        () -> {
                            while (publishing.get()) {
                                template.convertAndSend(
                                        ListenerApplication.QUEUE,
                                        "o" + published.getAndIncrement());
                                try {
                                    Thread.sleep(10); // the publishing rate, not synchronisation
                                } catch (InterruptedException ex) {
                                    return;
                                }
                            }
                        },
                        "publisher");
        publisher.start();
    }

    /**
     * Waits for the leader after the time, other than the given node: the node that consumes an
     * order (a cold JVM's first term can end before it consumes, so "elected" alone does not tell).
     */
    private String awaitLeader(long since, String other) {
        return nodes.await(after(since, "consumed").and(event -> !event.node().equals(other)), WAIT)
                .node();
    }

    private static Predicate<Event> by(String node) {
        return event -> event.node().equals(node);
    }

    private Event firstConsumed(String node, long since) {
        return nodes.await(after(since, "consumed").and(by(node)), WAIT);
    }

    private void awaitConsumed(String node, long since, int count) {
        await().atMost(WAIT)
                .until(
                        () ->
                                nodes.events().stream()
                                                .filter(after(since, "consumed").and(by(node)))
                                                .count()
                                        >= count);
    }

    /** Starts a node again and waits until it is up, so the next fault finds two followers. */
    private void restart(String node) {
        long restarted = System.currentTimeMillis();
        nodes.start(node);
        nodes.await(after(restarted, "ready").and(by(node)), WAIT);
    }

    private List<String> consumedBefore(long time, String node) {
        return nodes.events().stream()
                .filter(event -> event.kind().equals("consumed") && event.time() < time)
                .filter(by(node))
                .map(event -> event.details().get("order"))
                .toList();
    }

    @Test
    void theListenerMovesWithLeadershipAndEveryOrderIsAppliedOnce() throws Exception {
        List<String> figures = new ArrayList<>();
        long begin = System.currentTimeMillis();
        List.of("a", "b", "c").forEach(nodes::start);
        List.of("a", "b", "c")
                .forEach(node -> nodes.await(after(begin, "ready").and(by(node)), WAIT));
        startPublishing();
        String first = awaitLeader(begin, "");
        awaitConsumed(first, begin, 20);

        // A graceful hand-off: the successor consumes only after the predecessor's container
        // stopped.
        long terminated = System.currentTimeMillis();
        nodes.signal(first, "TERM");
        String second = awaitLeader(terminated, first);
        Event firstOfSecond = firstConsumed(second, terminated);
        Event drained = nodes.await(after(terminated, "drained").and(by(first)), WAIT);
        long lastOfFirst =
                nodes.events().stream()
                        .filter(event -> event.kind().equals("consumed"))
                        .filter(by(first))
                        .mapToLong(Event::time)
                        .max()
                        .orElseThrow();
        assertThat(lastOfFirst).isLessThanOrEqualTo(drained.time());
        assertThat(drained.time()).isLessThanOrEqualTo(firstOfSecond.time());
        figures.add(
                "graceful hand-off (SIGTERM): predecessor drained in "
                        + drained.details().get("millis")
                        + " ms; its last order "
                        + (firstOfSecond.time() - lastOfFirst)
                        + " ms and its container's stop "
                        + (firstOfSecond.time() - drained.time())
                        + " ms before the successor's first order (no overlap)");
        await().atMost(WAIT).until(() -> !nodes.isAlive(first));
        restart(first);
        awaitConsumed(second, terminated, 20);

        // A crash: the lease lapses and a successor takes over.
        long killed = System.currentTimeMillis();
        nodes.signal(second, "KILL");
        String third = awaitLeader(killed, second);
        long crashGap = firstConsumed(third, killed).time() - killed;
        figures.add("crash (SIGKILL): successor's first order " + crashGap + " ms after the kill");
        restart(second);
        awaitConsumed(third, killed, 20);
        assertThat(consumedBefore(killed, first))
                .as("orders consumed by both sides of the graceful hand-off")
                .doesNotContainAnyElementsOf(consumedBefore(killed, second));

        // A freeze: the frozen leader's term lapses; resumed, its container stops at once and its
        // late writes are refused by the fence.
        long frozen = System.currentTimeMillis();
        nodes.signal(third, "STOP");
        String fourth = awaitLeader(frozen, third);
        long freezeGap = firstConsumed(fourth, frozen).time() - frozen;
        figures.add(
                "freeze (SIGSTOP): successor's first order " + freezeGap + " ms after the freeze");
        nodes.signal(third, "CONT");
        nodes.await(after(frozen, "stepped-down").and(by(third)), WAIT);
        awaitConsumed(fourth, frozen, 20);

        publishing.set(false);
        publisher.join();
        int total = published.get();
        await().atMost(WAIT).until(() -> redis.opsForList().size(name + ":applied") >= total);
        List<String> applied = redis.opsForList().range(name + ":applied", 0, -1);
        assertThat(applied).hasSize(total).doesNotHaveDuplicates();
        Map<String, Long> deliveries =
                nodes.events().stream()
                        .filter(event -> event.kind().equals("consumed"))
                        .collect(
                                Collectors.groupingBy(
                                        event -> event.details().get("order"),
                                        Collectors.counting()));
        List<String> redelivered =
                deliveries.entrySet().stream()
                        .filter(entry -> entry.getValue() > 1)
                        .map(Map.Entry::getKey)
                        .sorted(Comparator.naturalOrder())
                        .toList();
        long refused =
                nodes.events().stream()
                        .filter(event -> event.kind().equals("consumed"))
                        .filter(event -> event.details().get("applied").equals("false"))
                        .count();
        figures.add(
                total
                        + " orders published, each applied exactly once; "
                        + redelivered.size()
                        + " delivered more than once "
                        + redelivered
                        + ", "
                        + refused
                        + " refused by the fence");
        write(figures);
    }

    private static void write(List<String> figures) throws IOException {
        Path path = Path.of("target", "listener-failover-figures.txt");
        Files.createDirectories(path.getParent());
        Files.write(path, figures);
        figures.forEach(System.out::println);
    }
}
