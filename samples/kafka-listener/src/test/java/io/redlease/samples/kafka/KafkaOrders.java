package io.redlease.samples.kafka;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A topic of its own on the test's broker, the consumer group's and the program arguments that
 * point a copy of the sample at them, and a publisher of orders o0, o1, ...
 */
final class KafkaOrders implements AutoCloseable {

    final String topic;

    final String group;

    private final KafkaBroker broker;

    private final KafkaProducer<String, String> producer;

    private final AtomicBoolean publishing = new AtomicBoolean();

    private final AtomicInteger published = new AtomicInteger();

    private final AtomicInteger failed = new AtomicInteger();

    private Thread publisher;

    KafkaOrders(KafkaBroker broker) {
        this.broker = broker;
        long unique = System.nanoTime();
        this.topic = "orders-" + unique;
        this.group = "orders-" + unique;
        broker.createTopic(topic, 1);
        this.producer =
                new KafkaProducer<>(
                        Map.of("bootstrap.servers", broker.bootstrapServers()),
                        new StringSerializer(),
                        new StringSerializer());
    }

    /** Returns the arguments that point the sample at this topic, its group and the broker. */
    List<String> arguments() {
        return List.of(
                "--spring.kafka.bootstrap-servers=" + broker.bootstrapServers(),
                "--spring.kafka.consumer.group-id=" + group,
                "--sample.topic=" + topic);
    }

    /** Publishes one order and waits until the broker has it. */
    void send(String order) throws Exception {
        producer.send(new ProducerRecord<>(topic, order)).get();
    }

    /** Publishes o0, o1, ... one every interval until {@link #stopPublishing()}. */
    void startPublishing(long intervalMillis) {
        publishing.set(true);
        publisher =
                new Thread(
                        () -> {
                            while (publishing.get()) {
                                producer.send(
                                        new ProducerRecord<>(
                                                topic, "o" + published.getAndIncrement()),
                                        (metadata, error) -> {
                                            if (error != null) {
                                                failed.incrementAndGet();
                                            }
                                        });
                                try {
                                    Thread.sleep(intervalMillis); // the rate, not synchronisation
                                } catch (InterruptedException ex) {
                                    return;
                                }
                            }
                        },
                        "publisher");
        publisher.start();
    }

    /** Stops publishing and returns how many orders the broker has; fails if a send failed. */
    int stopPublishing() throws InterruptedException {
        publishing.set(false);
        if (publisher != null) {
            publisher.join();
            publisher = null;
        }
        producer.flush();
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " orders could not be published");
        }
        return published.get();
    }

    @Override
    public void close() throws InterruptedException {
        publishing.set(false);
        if (publisher != null) {
            publisher.join();
        }
        producer.close();
    }
}
