package io.redlease.docs.partitions;

import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Instant;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** Settles each partition this instance owns, through that partition's fence. */
@Component
class SettlementJob {

    private final LeadershipContext leadership;

    SettlementJob(LeadershipContext leadership) {
        this.leadership = leadership;
    }

    // tag::partitioned-job[]
    @Scheduled(fixedDelay = 1000)
    @LeaderOnly(partitions = "orders")
    void settle() { // runs once per partition owned, per tick
        int partition = leadership.partition().orElseThrow();
        Fencer fencer = leadership.requireFencer(); // this partition's term
        // The partition's keys carry its hash tag, {billing:orders:p<i>}:
        String state = leadership.partitions("orders").electionName(partition) + ":state";
        // Throws FenceRefusedException once the partition has a newer term (it moved on):
        fencer.hsetOrThrow(state, "settled-at", Instant.now().toString());
    }
    // end::partitioned-job[]
}
