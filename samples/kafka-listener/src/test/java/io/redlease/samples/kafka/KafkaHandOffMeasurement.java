package io.redlease.samples.kafka;

import static io.redlease.test.AppNodes.after;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Measures the sample's graceful hand-off (SIGTERM of the leader: the predecessor's last order to
 * the successor's first) under the consumer group settings that decide what the group adds to it.
 * Two JVMs of the sample on a broker of its own per setting, an order published every 10 ms, 20 ms
 * of work per order (a backlog, so the successor always has an order waiting), TTL 2 s; after each
 * hand-off the stopped node is started again as the follower. Not part of the suite (its name is
 * not a test class name); run it with
 *
 * <pre>
 * mvn -B -ntp verify -pl samples/kafka-listener -am -Dtest=KafkaHandOffMeasurement \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dredlease.test.timeout=30m -Dredlease.test.forks=1 \
 *     -Dsettings=static,dynamic -Dhandoffs=5
 * </pre>
 *
 * ({@code -DnodeArgs="--logging.level.org.apache.kafka.clients.consumer=INFO"} adds arguments to
 * every node, to trace a hand-off in the nodes' output beside the events file).
 *
 * <p>It prints one {@code KAFKA-HANDOFF} line per setting (milliseconds) and appends it to {@code
 * target/kafka-handoff-figures.txt}. The settings:
 *
 * <ul>
 *   <li>{@code static}: the sample as shipped, one static member ({@code group.instance.id}) shared
 *       by every instance, warm standby on, the broker's default initial rebalance delay;
 *   <li>{@code static-cold}: the same with {@code redlease.warm-standby=false};
 *   <li>{@code dynamic}: Kafka's defaults, each consumer a new dynamic member, the broker's {@code
 *       group.initial.rebalance.delay.ms} at its default 3 s;
 *   <li>{@code dynamic-no-delay}: dynamic members, the broker's delay 0;
 *   <li>{@code consumer-protocol}: dynamic members of the new consumer group protocol ({@code
 *       group.protocol=consumer}, KIP-848);
 *   <li>{@code static-consumer-protocol}: the static member on the new protocol.
 * </ul>
 */
@ExtendWith(RedisExtension.class)
class KafkaHandOffMeasurement {

    private static final Duration WAIT = Duration.ofMinutes(3);

    private static final String DYNAMIC =
            "--spring.config.location=classpath:/dynamic-membership.properties";

    private static final String NEW_PROTOCOL =
            "--spring.kafka.consumer.properties.group.protocol=consumer";

    private static final Map<String, List<String>> ARGUMENTS =
            Map.of(
                    "static", List.of(),
                    "static-cold", List.of("--redlease.warm-standby=false"),
                    "dynamic", List.of(DYNAMIC),
                    "dynamic-no-delay", List.of(DYNAMIC),
                    "consumer-protocol", List.of(DYNAMIC, NEW_PROTOCOL),
                    "static-consumer-protocol", List.of(NEW_PROTOCOL));

    @Test
    void gracefulHandOffs(RedisServer server) throws Exception {
        int handoffs = Integer.getInteger("handoffs", 5);
        for (String settings : System.getProperty("settings", "static,dynamic").split(",")) {
            measure(server, settings.trim(), handoffs);
        }
    }

    private void measure(RedisServer server, String settings, int handoffs) throws Exception {
        List<String> extra = ARGUMENTS.get(settings);
        if (extra == null) {
            throw new IllegalArgumentException(
                    "unknown setting " + settings + "; known: " + ARGUMENTS.keySet());
        }
        Map<String, String> brokerProperties =
                settings.equals("dynamic-no-delay")
                        ? Map.of(KafkaBroker.INITIAL_REBALANCE_DELAY, "0")
                        : Map.of();
        String name = "{kafka-handoff-" + System.nanoTime() + "}";
        String loadBefore = loadAverage();
        List<Long> gaps = new ArrayList<>();
        List<Long> electedToFirst = new ArrayList<>();
        try (KafkaBroker broker = KafkaBroker.start(brokerProperties);
                KafkaOrders orders = new KafkaOrders(broker);
                AppNodes nodes =
                        new AppNodes(
                                KafkaListenerApplication.class,
                                id -> arguments(server, name, id, orders, extra),
                                Path.of("target", "kafka-handoff-" + settings + "-events.txt"))) {
            long begin = System.currentTimeMillis();
            List.of("a", "b").forEach(nodes::start);
            List.of("a", "b")
                    .forEach(node -> nodes.await(after(begin, "ready").and(by(node)), WAIT));
            orders.startPublishing(10);
            String leader = nodes.await(after(begin, "consumed"), WAIT).node();
            awaitConsumed(nodes, leader, begin, 20);
            for (int i = 0; i < handoffs; i++) {
                String successor = leader.equals("a") ? "b" : "a";
                long terminated = System.currentTimeMillis();
                nodes.signal(leader, "TERM");
                Event first = nodes.await(after(terminated, "consumed").and(by(successor)), WAIT);
                Event elected = nodes.await(after(terminated, "elected").and(by(successor)), WAIT);
                String predecessor = leader;
                long last =
                        nodes.events().stream()
                                .filter(event -> event.kind().equals("consumed"))
                                .filter(by(predecessor))
                                .mapToLong(Event::time)
                                .max()
                                .orElseThrow();
                gaps.add(first.time() - last);
                electedToFirst.add(first.time() - elected.time());
                await().atMost(WAIT).until(() -> !nodes.isAlive(predecessor));
                long restarted = System.currentTimeMillis();
                nodes.start(predecessor);
                nodes.await(after(restarted, "ready").and(by(predecessor)), WAIT);
                awaitConsumed(nodes, successor, terminated, 20);
                leader = successor;
            }
        }
        List<Long> sorted = gaps.stream().sorted().toList();
        String line =
                "KAFKA-HANDOFF settings="
                        + settings
                        + " gaps="
                        + gaps
                        + " p50="
                        + sorted.get((sorted.size() - 1) / 2)
                        + " max="
                        + sorted.get(sorted.size() - 1)
                        + " electedToFirst="
                        + electedToFirst
                        + " load="
                        + loadBefore
                        + ".."
                        + loadAverage();
        System.out.println(line);
        Path figures = Path.of("target", "kafka-handoff-figures.txt");
        Files.createDirectories(figures.getParent());
        Files.writeString(
                figures,
                line + System.lineSeparator(),
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    private static List<String> arguments(
            RedisServer server, String name, String id, KafkaOrders orders, List<String> extra) {
        List<String> arguments =
                new ArrayList<>(
                        List.of(
                                "--spring.main.web-application-type=none",
                                "--spring.main.banner-mode=off",
                                "--spring.data.redis.url=" + server.url(),
                                "--redlease.name=" + name,
                                "--redlease.instance-id=" + id,
                                "--redlease.ttl=2000ms",
                                "--redlease.renew-interval=300ms",
                                "--redlease.acquire-interval=300ms",
                                "--spring.lifecycle.timeout-per-shutdown-phase=10s",
                                "--sample.work-millis=20",
                                "--logging.level.root=WARN",
                                "--logging.level.io.redlease.samples.demo=INFO"));
        arguments.addAll(orders.arguments());
        arguments.addAll(extra);
        String more = System.getProperty("nodeArgs", "").trim(); // for tracing, e.g. log levels
        if (!more.isEmpty()) {
            arguments.addAll(Arrays.asList(more.split("\\s+")));
        }
        return arguments;
    }

    private static Predicate<Event> by(String node) {
        return event -> event.node().equals(node);
    }

    private static void awaitConsumed(AppNodes nodes, String node, long since, int count) {
        await().atMost(WAIT)
                .until(
                        () ->
                                nodes.events().stream()
                                                .filter(after(since, "consumed").and(by(node)))
                                                .count()
                                        >= count);
    }

    private static String loadAverage() {
        try {
            return Arrays.stream(Files.readString(Path.of("/proc/loadavg")).split(" "))
                    .limit(3)
                    .reduce((a, b) -> a + "/" + b)
                    .orElse("?");
        } catch (java.io.IOException ex) {
            return "?";
        }
    }
}
