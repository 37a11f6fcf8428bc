package io.redlease.samples.kafka;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * A real Kafka broker for the tests: one KRaft node (broker and controller combined) that
 * spring-kafka-test's {@link EmbeddedKafkaKraftBroker} runs inside the test JVM, listening on a
 * free loopback port, so application JVMs started by {@link AppNodes} connect to it over TCP at
 * {@link #bootstrapServers()}.
 *
 * <p>Unlike the test kit's own default, the group coordinator keeps Kafka's default {@value
 * #INITIAL_REBALANCE_DELAY} of 3 s, so a test sees the rebalance delay a broker in production adds;
 * {@link #start(Map)} takes other broker properties. The broker needs {@code
 * org.springframework.kafka:spring-kafka-test} on the test class path (an optional dependency of
 * this module). {@link #shared()} gives one broker to the whole test JVM, stopped at exit; it lives
 * and dies with the test JVM, so no watchdog process is needed.
 */
public final class KafkaBroker implements AutoCloseable {

    /** The broker property delaying the first rebalance of an empty consumer group. */
    public static final String INITIAL_REBALANCE_DELAY = "group.initial.rebalance.delay.ms";

    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    /** The broker shared by this test JVM, once started. */
    private static KafkaBroker shared;

    private final EmbeddedKafkaKraftBroker broker;

    private volatile boolean closed;

    private KafkaBroker(EmbeddedKafkaKraftBroker broker) {
        this.broker = broker;
    }

    /**
     * Returns the broker shared by the whole test JVM, starting it on first use; tests must not
     * close it, and use topics and consumer groups of their own.
     *
     * @return the running shared broker
     */
    public static synchronized KafkaBroker shared() {
        if (shared == null || shared.isClosed()) {
            shared = startShared();
        }
        return shared;
    }

    private static KafkaBroker startShared() {
        KafkaBroker broker = start(Map.of());
        Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "kafka-broker-stop"));
        return broker;
    }

    /**
     * Starts a broker of the caller's own, to close when done.
     *
     * @param brokerProperties broker properties over Kafka's defaults, for example {@value
     *     #INITIAL_REBALANCE_DELAY}
     * @return a running broker
     */
    public static KafkaBroker start(Map<String, String> brokerProperties) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put(INITIAL_REBALANCE_DELAY, "3000");
        properties.put("auto.create.topics.enable", "false");
        // One partition for the offsets topic: a group's first use does not wait for fifty.
        properties.put("offsets.topic.num.partitions", "1");
        properties.putAll(brokerProperties);
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
        broker.brokerProperties(properties);
        broker.afterPropertiesSet();
        return new KafkaBroker(broker);
    }

    /** Returns the {@code bootstrap.servers} of the broker, {@code host:port}. */
    public String bootstrapServers() {
        return broker.getBrokersAsString();
    }

    /** Returns the host of {@link #bootstrapServers()}. */
    public String host() {
        String servers = bootstrapServers();
        return servers.substring(0, servers.lastIndexOf(':'));
    }

    /** Returns the port of {@link #bootstrapServers()}. */
    public int port() {
        String servers = bootstrapServers();
        return Integer.parseInt(servers.substring(servers.lastIndexOf(':') + 1));
    }

    /**
     * Creates a topic and waits until the broker has created it.
     *
     * @param name the topic's name
     * @param partitions its number of partitions
     */
    public void createTopic(String name, int partitions) {
        broker.doWithAdmin(
                admin -> {
                    try {
                        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
                                .all()
                                .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted creating topic " + name, ex);
                    } catch (Exception ex) {
                        throw new IllegalStateException("could not create topic " + name, ex);
                    }
                });
    }

    boolean isClosed() {
        return closed;
    }

    /** Stops the broker and deletes its directories. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            broker.destroy();
        }
    }
}
