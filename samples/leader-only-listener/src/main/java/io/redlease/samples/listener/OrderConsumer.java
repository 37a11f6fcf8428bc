package io.redlease.samples.listener;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import java.util.List;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Applies each order once, through the fence: a message is recorded in the hash {@code
 * <name>:orders} and the list {@code <name>:applied} only if this instance's term is still the
 * newest and the order was not applied before. A message redelivered after a crash is acknowledged
 * without applying it again; one consumed by an ex-leader whose term has passed is refused by the
 * fence: {@link Fencer#evalOrThrow} throws, so the message is requeued for the new leader instead
 * of being acknowledged.
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
    @RabbitListener(id = "orders", queues = ListenerApplication.QUEUE, autoStartup = "false")
    void consume(String order) throws InterruptedException {
        Fencer fencer = leadership.requireFencer();
        if (workMillis > 0) {
            Thread.sleep(workMillis); // the order's processing
        }
        try {
            // Throws unless the write landed: the message is then requeued, not acknowledged,
            // and the new leader applies it.
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
