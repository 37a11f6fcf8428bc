package io.redlease.samples.kafka;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;

/**
 * Applies each order once, through the fence: a record is recorded in the hash {@code
 * <name>:orders} and the list {@code <name>:applied} only if this instance's term is still the
 * newest and the order was not applied before. A record consumed again after a crash is committed
 * without applying it twice; one consumed by an ex-leader whose term has passed is refused by the
 * fence: {@link Fencer#evalOrThrow} throws, so its offset is not committed and the new leader
 * consumes it.
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

    public OrderConsumer(
            LeadershipContext leadership,
            Events events,
            @Value("${redlease.name}") String name,
            @Value("${sample.work-millis:0}") long workMillis) {
        this.leadership = leadership;
        this.events = events;
        this.keys = List.of(name + ":orders", name + ":applied");
        this.workMillis = workMillis;
    }

    // tag::fenced-listener[]
    @KafkaListener(
            id = "orders",
            idIsGroup = false,
            topics = "${sample.topic:orders}",
            autoStartup = "false")
    void consume(String order) throws InterruptedException {
        Fencer fencer = leadership.requireFencer();
        if (workMillis > 0) {
            Thread.sleep(workMillis); // the order's processing
        }
        try {
            // Throws unless the write landed: the offset is then not committed, and the new
            // leader consumes the record.
            fencer.evalOrThrow(APPLY, keys, order, leadership.instanceId() + ":" + fencer.token());
        } catch (FenceRefusedException refused) {
            events.emit(
                    "consumed", "order=" + order + " token=" + fencer.token() + " applied=false");
            throw refused;
        }
        events.emit("consumed", "order=" + order + " token=" + fencer.token() + " applied=true");
    }
    // end::fenced-listener[]
}
