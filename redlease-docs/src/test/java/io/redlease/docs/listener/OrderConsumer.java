package io.redlease.docs.listener;

import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import java.util.List;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/** Consumes the queue on the leader only, applying each order once through the fence. */
@Component
class OrderConsumer {

    private final LeadershipContext leadership;

    private final List<String> keys;

    OrderConsumer(LeadershipContext leadership, @Value("${redlease.name}") String election) {
        this.leadership = leadership;
        this.keys = List.of(election + ":orders", election + ":applied");
    }

    // tag::apply-once[]
    /**
     * Applies the order unless it was applied before. KEYS[1] and ARGV[1] belong to the fence; the
     * script's own keys and arguments start at index 2.
     */
    static final String APPLY_ONCE =
            """
            if redis.call('HSETNX', KEYS[2], ARGV[2], 'applied') == 1 then
              redis.call('RPUSH', KEYS[3], ARGV[2])
            end
            """;

    // end::apply-once[]
    // tag::listener[]
    @RabbitListener(id = "orders", queues = "orders", autoStartup = "false")
    void consume(String order) {
        Fencer fencer = leadership.requireFencer();
        // Throws FenceRefusedException if a newer term exists: the message is then requeued,
        // not acknowledged, and the new leader applies it. Returning would lose it.
        fencer.evalOrThrow(APPLY_ONCE, keys, order);
    }
    // end::listener[]
}
