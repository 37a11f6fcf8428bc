package io.redlease.samples.jms;

import static io.redlease.test.AppNodes.after;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.ArtemisServer;
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
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jms.connection.CachingConnectionFactory;
import org.springframework.jms.core.JmsTemplate;

/**
 * The leader-only JMS listener across real failovers: three copies of the sample in their own JVMs
 * on a real Artemis broker and a real Redis, orders published throughout, then graceful hand-offs
 * (SIGTERM), a crash (SIGKILL) and a freeze (SIGSTOP) of the leader. At a hand-off the successor
 * consumes only after the predecessor's container stopped; after a crash or a freeze a successor
 * consumes once the lease lapsed; the frozen leader, resumed, has its write refused by the fence
 * and the order redelivered; every order is applied exactly once and none is dead-lettered. How
 * long each takes is measured, not asserted: the figures are written to {@code
 * target/jms-listener-failover-figures.txt}. {@code -Dredlease.sample.handoffs=5} makes five
 * graceful hand-offs instead of one; {@code -Dredlease.sample.warm-standby=false} turns warm
 * standby off in the nodes.
 */
@ExtendWith(RedisExtension.class)
class JmsListenerFailoverTests {

    private static final Duration WAIT = Duration.ofMinutes(3);

    private static final long TTL_MILLIS = 2000;

    private static final ArtemisServer artemis = ArtemisServer.shared();

    private RedisServer server;

    private String name;

    private String queue;

    private LettuceConnectionFactory redisFactory;

    private StringRedisTemplate redis;

    private CachingConnectionFactory jmsFactory;

    private AppNodes nodes;

    private final AtomicBoolean publishing = new AtomicBoolean(true);

    private final AtomicInteger published = new AtomicInteger();

    private Thread publisher;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{orders-" + System.nanoTime() + "}";
        this.queue = artemis.newQueue("orders");
        this.redisFactory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        redisFactory.afterPropertiesSet();
        this.redis = new StringRedisTemplate(redisFactory);
        this.jmsFactory =
                new CachingConnectionFactory(new ActiveMQConnectionFactory(artemis.url()));
        this.nodes =
                new AppNodes(
                        JmsListenerApplication.class,
                        this::arguments,
                        Path.of("target", "jms-listener-failover-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        publishing.set(false);
        if (publisher != null) {
            publisher.join();
        }
        nodes.close();
        jmsFactory.destroy();
        artemis.deleteQueue(queue);
        redisFactory.destroy();
    }

    private List<String> arguments(String id) {
        List<String> arguments =
                new ArrayList<>(
                        List.of(
                                "--spring.main.web-application-type=none",
                                "--spring.main.banner-mode=off",
                                "--spring.data.redis.url=" + server.url(),
                                "--ARTEMIS_URL=" + artemis.url(),
                                "--sample.queue=" + queue,
                                "--redlease.name=" + name,
                                "--redlease.instance-id=" + id,
                                "--redlease.ttl=" + TTL_MILLIS + "ms",
                                "--redlease.renew-interval=300ms",
                                "--redlease.acquire-interval=300ms",
                                "--spring.lifecycle.timeout-per-shutdown-phase=10s",
                                "--sample.work-millis=20",
                                "--sample.slow-millis=5000",
                                "--logging.level.root=WARN",
                                "--logging.level.io.redlease.samples.demo=INFO",
                                "--logging.pattern.console=%level %m%n"));
        String warmStandby = System.getProperty("redlease.sample.warm-standby");
        if (warmStandby != null) {
            arguments.add("--redlease.warm-standby=" + warmStandby);
        }
        return arguments;
    }

    /** Publishes order o0, o1, ... every 10 ms until stopped. */
    private void startPublishing() {
        JmsTemplate template = new JmsTemplate(jmsFactory);
        publisher =
                new Thread(
                        () -> {
                            while (publishing.get()) {
                                template.convertAndSend(queue, "o" + published.getAndIncrement());
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

    /** Sends an order ahead of the queue's backlog (the highest JMS priority). */
    private void sendFirst(String order) {
        JmsTemplate template = new JmsTemplate(jmsFactory);
        template.setExplicitQosEnabled(true);
        template.setPriority(9);
        template.convertAndSend(queue, order);
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

    private static Predicate<Event> order(String order) {
        return event -> order.equals(event.details().get("order"));
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

    /** Makes a graceful hand-off of the leader and returns the successor. */
    private String handOff(String leader, List<String> figures) throws Exception {
        long terminated = System.currentTimeMillis();
        nodes.signal(leader, "TERM");
        String successor = awaitLeader(terminated, leader);
        Event firstOfSuccessor = firstConsumed(successor, terminated);
        Event drained = nodes.await(after(terminated, "drained").and(by(leader)), WAIT);
        long lastOfLeader =
                nodes.events().stream()
                        .filter(event -> event.kind().equals("consumed"))
                        .filter(by(leader))
                        .mapToLong(Event::time)
                        .max()
                        .orElseThrow();
        assertThat(lastOfLeader).isLessThanOrEqualTo(drained.time());
        assertThat(drained.time()).isLessThanOrEqualTo(firstOfSuccessor.time());
        Event elected = nodes.await(after(terminated, "elected").and(by(successor)), WAIT);
        Event received = nodes.await(after(terminated, "first-received").and(by(successor)), WAIT);
        figures.add(
                "graceful hand-off (SIGTERM): predecessor drained in "
                        + drained.details().get("millis")
                        + " ms; its last order "
                        + (firstOfSuccessor.time() - lastOfLeader)
                        + " ms and its container's stop "
                        + (firstOfSuccessor.time() - drained.time())
                        + " ms before the successor's first order (no overlap); successor elected "
                        + (elected.time() - lastOfLeader)
                        + " ms after the last order, its first receive "
                        + (received.time() - elected.time())
                        + " ms after its election, that order applied "
                        + (firstOfSuccessor.time() - received.time())
                        + " ms later");
        await().atMost(WAIT).until(() -> !nodes.isAlive(leader));
        restart(leader);
        awaitConsumed(successor, terminated, 20);
        return successor;
    }

    @Test
    void theListenerMovesWithLeadershipAndEveryOrderIsAppliedOnce() throws Exception {
        List<String> figures = new ArrayList<>();
        long begin = System.currentTimeMillis();
        List.of("a", "b", "c").forEach(nodes::start);
        List.of("a", "b", "c")
                .forEach(node -> nodes.await(after(begin, "ready").and(by(node)), WAIT));
        startPublishing();
        String leader = awaitLeader(begin, "");
        awaitConsumed(leader, begin, 20);

        // Graceful hand-offs: each successor consumes only after its predecessor's container
        // stopped.
        int handOffs = Integer.getInteger("redlease.sample.handoffs", 1);
        for (int i = 0; i < handOffs; i++) {
            leader = handOff(leader, figures);
        }

        // A crash: the lease lapses and a successor takes over.
        long killed = System.currentTimeMillis();
        nodes.signal(leader, "KILL");
        String crashed = leader;
        leader = awaitLeader(killed, crashed);
        long crashGap = firstConsumed(leader, killed).time() - killed;
        figures.add("crash (SIGKILL): successor's first order " + crashGap + " ms after the kill");
        assertThat(consumedMoreThanOnce(killed))
                .as("orders consumed on both sides of a graceful hand-off")
                .isEmpty();
        restart(crashed);
        awaitConsumed(leader, killed, 20);

        // A freeze in the middle of an order: the frozen leader's term lapses and a successor
        // takes over; resumed, the frozen leader's write is refused by the fence, its session
        // rolled back, and the order applied by the successor.
        long sent = System.currentTimeMillis();
        sendFirst("slow-1");
        nodes.await(after(sent, "received").and(by(leader)).and(order("slow-1")), WAIT);
        long frozen = System.currentTimeMillis();
        String frozenLeader = leader;
        nodes.signal(frozenLeader, "STOP");
        leader = awaitLeader(frozen, frozenLeader);
        long freezeGap = firstConsumed(leader, frozen).time() - frozen;
        figures.add(
                "freeze (SIGSTOP): successor's first order " + freezeGap + " ms after the freeze");
        nodes.signal(frozenLeader, "CONT");
        Event refused =
                nodes.await(
                        after(frozen, "consumed").and(by(frozenLeader)).and(order("slow-1")), WAIT);
        assertThat(refused.details()).containsEntry("applied", "false");
        nodes.await(after(frozen, "stepped-down").and(by(frozenLeader)), WAIT);
        awaitConsumed(leader, frozen, 20);

        publishing.set(false);
        publisher.join();
        int total = published.get() + 1;
        await().atMost(WAIT).until(() -> redis.opsForList().size(name + ":applied") >= total);
        List<String> applied = redis.opsForList().range(name + ":applied", 0, -1);
        assertThat(applied).hasSize(total).doesNotHaveDuplicates().contains("slow-1");
        assertThat(artemis.messageCount(ArtemisServer.DEAD_LETTERS)).isZero();
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
        long refusals =
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
                        + refusals
                        + " refused by the fence");
        write(figures);
    }

    /** Returns the orders that were consumed more than once before the time. */
    private List<String> consumedMoreThanOnce(long before) {
        return nodes.events().stream()
                .filter(event -> event.kind().equals("consumed") && event.time() < before)
                .collect(
                        Collectors.groupingBy(
                                event -> event.details().get("order"), Collectors.counting()))
                .entrySet()
                .stream()
                .filter(entry -> entry.getValue() > 1)
                .map(Map.Entry::getKey)
                .sorted()
                .toList();
    }

    private static void write(List<String> figures) throws IOException {
        Path path = Path.of("target", "jms-listener-failover-figures.txt");
        Files.createDirectories(path.getParent());
        Files.write(path, figures);
        figures.forEach(System.out::println);
    }
}
