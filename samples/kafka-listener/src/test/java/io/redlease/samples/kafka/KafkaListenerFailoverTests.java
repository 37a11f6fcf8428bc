package io.redlease.samples.kafka;

import static io.redlease.test.AppNodes.after;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
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
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The leader-only Kafka listener across real failovers: three copies of the sample in their own
 * JVMs on a real Kafka broker (KRaft, in this JVM) and a real Redis, orders published throughout,
 * then a graceful hand-off (SIGTERM), a crash (SIGKILL) and a freeze (SIGSTOP) of the leader. At
 * the hand-off the successor consumes only after the predecessor's container stopped; after a crash
 * or a freeze a successor consumes once the lease lapsed, its consumer taking the static member's
 * place in the group; a resumed frozen leader applies nothing; every order is applied exactly once.
 * How long each takes is measured, not asserted: the figures are written to {@code
 * target/kafka-failover-figures.txt}.
 */
@ExtendWith(RedisExtension.class)
class KafkaListenerFailoverTests {

    private static final Duration WAIT = Duration.ofMinutes(3);

    private static final long TTL_MILLIS = 2000;

    private RedisServer server;

    private String name;

    private LettuceConnectionFactory redisFactory;

    private StringRedisTemplate redis;

    private KafkaOrders orders;

    private AppNodes nodes;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{kafka-orders-" + System.nanoTime() + "}";
        this.redisFactory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        redisFactory.afterPropertiesSet();
        this.redis = new StringRedisTemplate(redisFactory);
        this.orders = new KafkaOrders(KafkaBroker.shared());
        this.nodes =
                new AppNodes(
                        KafkaListenerApplication.class,
                        this::arguments,
                        Path.of("target", "kafka-failover-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        orders.close();
        nodes.close();
        redisFactory.destroy();
    }

    private List<String> arguments(String id) {
        List<String> arguments =
                new ArrayList<>(
                        List.of(
                                "--spring.main.web-application-type=none",
                                "--spring.main.banner-mode=off",
                                "--spring.data.redis.url=" + server.url(),
                                "--redlease.name=" + name,
                                "--redlease.instance-id=" + id,
                                "--redlease.ttl=" + TTL_MILLIS + "ms",
                                "--redlease.renew-interval=300ms",
                                "--redlease.acquire-interval=300ms",
                                "--spring.lifecycle.timeout-per-shutdown-phase=10s",
                                "--sample.work-millis=5",
                                "--logging.level.root=WARN",
                                "--logging.level.io.redlease.samples.demo=INFO",
                                "--logging.pattern.console=%level %m%n"));
        arguments.addAll(orders.arguments());
        return arguments;
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
        orders.startPublishing(10);
        String first = awaitLeader(begin, "");
        awaitConsumed(first, begin, 20);

        // A graceful hand-off: the successor consumes only after the predecessor's container
        // stopped (and committed what it applied).
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

        // A crash: the lease lapses and a successor takes over; its consumer replaces the dead
        // one's static membership at once, without waiting for the group's session timeout.
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

        // A freeze: the frozen leader's term lapses and its group membership is taken over;
        // resumed, its container stops and its late writes are refused by the fence.
        long frozen = System.currentTimeMillis();
        nodes.signal(third, "STOP");
        String fourth = awaitLeader(frozen, third);
        long freezeGap = firstConsumed(fourth, frozen).time() - frozen;
        figures.add(
                "freeze (SIGSTOP): successor's first order " + freezeGap + " ms after the freeze");
        long resumed = System.currentTimeMillis();
        nodes.signal(third, "CONT");
        nodes.await(after(frozen, "stepped-down").and(by(third)), WAIT);
        awaitConsumed(fourth, frozen, 20);
        List<Event> lateWrites =
                nodes.events().stream().filter(after(resumed, "consumed").and(by(third))).toList();
        assertThat(lateWrites)
                .as("writes of the resumed frozen leader")
                .allSatisfy(event -> assertThat(event.details()).containsEntry("applied", "false"));
        figures.add(
                "freeze (SIGSTOP): the resumed leader's late writes: "
                        + lateWrites.size()
                        + ", all refused by the fence");

        int total = orders.stopPublishing();
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
        Path path = Path.of("target", "kafka-failover-figures.txt");
        Files.createDirectories(path.getParent());
        Files.write(path, figures);
        figures.forEach(System.out::println);
    }
}
