package io.redlease.samples.jms;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jms.annotation.JmsListener;
import org.springframework.stereotype.Component;

/**
 * Applies each order once, through the fence: an order is recorded in the hash {@code
 * <name>:orders} and the list {@code <name>:applied} only if this instance's term is still the
 * newest and the order was not applied before. An order redelivered after a crash is acknowledged
 * without applying it again; one consumed by an ex-leader whose term has passed is refused by the
 * fence: {@link Fencer#evalOrThrow} throws, the container rolls its session back and the broker
 * redelivers the order to the new leader instead of it being acknowledged.
 */
@Component
public class OrderConsumer {

    /** Records the order unless it was applied already; KEYS[1] and ARGV[1] belong to the fence. */
    private static final String APPLY =
            "if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 1 then"
                    + " redis.call('RPUSH', KEYS[3], ARGV[2]) end";

    private final LeadershipContext leadership;

    private final Events events;

    private final List<String> keys;

    private final long workMillis;

    private final long slowMillis;

    /** The term whose first order was announced (one listener thread). */
    private long firstOfToken;

    public OrderConsumer(
            LeadershipContext leadership,
            Events events,
            @Value("${redlease.name}") String name,
            @Value("${sample.work-millis:0}") long workMillis,
            @Value("${sample.slow-millis:0}") long slowMillis) {
        this.leadership = leadership;
        this.events = events;
        this.keys = List.of(name + ":orders", name + ":applied");
        this.workMillis = workMillis;
        this.slowMillis = slowMillis;
    }

    // tag::fenced-jms-listener[]
    @JmsListener(id = "orders", destination = "${sample.queue:orders}")
    void consume(String order) throws InterruptedException {
        Fencer fencer = leadership.requireFencer();
        process(order);
        try {
            // Throws unless the write landed: the transacted session is then rolled back and the
            // broker redelivers the order to the new leader.
            fencer.evalOrThrow(APPLY, keys, order, leadership.instanceId() + ":" + fencer.token());
        } catch (FenceRefusedException refused) {
            events.emit(
                    "consumed", "order=" + order + " token=" + fencer.token() + " applied=false");
            throw refused;
        }
        events.emit("consumed", "order=" + order + " token=" + fencer.token() + " applied=true");
    }

    // end::fenced-jms-listener[]

    /**
     * The order's processing: {@code sample.work-millis}, and {@code sample.slow-millis} for an
     * order named {@code slow-*}, announced first, so that a test can freeze the leader in the
     * middle of it. The first order of each term is announced too, to time the container's start.
     */
    private void process(String order) throws InterruptedException {
        long token = leadership.token().orElse(0);
        if (token != firstOfToken) {
            firstOfToken = token;
            events.emit("first-received", "order=" + order + " token=" + token);
        }
        long millis = workMillis;
        if (order.startsWith("slow-")) {
            events.emit("received", "order=" + order);
            millis = slowMillis;
        }
        if (millis > 0) {
            Thread.sleep(millis); // the order's processing, not synchronisation
        }
    }
}
