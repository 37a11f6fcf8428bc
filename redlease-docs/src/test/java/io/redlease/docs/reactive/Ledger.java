package io.redlease.docs.reactive;

import io.redlease.core.LeadershipContext;
import io.redlease.core.ReactiveFencer;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import java.time.Instant;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/** Reactive leader-only work: a call checked at each subscription, and a once-per-slot report. */
@Service
class Ledger {

    /** Records the slot's report unless the slot has one: a repeated run adds nothing. */
    static final String RECORD_ONCE =
            "if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 1 then"
                    + " redis.call('RPUSH', KEYS[3], ARGV[2]) end";

    private final LeadershipContext leadership;

    private final String settledKey;

    private final String reportsKey;

    private final String slotsKey;

    Ledger(LeadershipContext leadership, @Value("${redlease.name}") String election) {
        this.leadership = leadership;
        this.settledKey = election + ":settled";
        this.reportsKey = election + ":reports";
        this.slotsKey = election + ":reported-slots";
    }

    // tag::reactive[]
    @LeaderOnly(whenNotLeader = WhenNotLeader.REJECT) // a follower's subscription fails
    public Mono<Long> settle() {
        return leadership
                .reactiveFencer() // the fencer of the subscription's term
                .flatMap(
                        fencer ->
                                fencer.setOrThrow(settledKey, Instant.now().toString())
                                        .thenReturn(fencer.token()));
    }

    @Scheduled(cron = "${ledger.report.cron:0 * * * * *}")
    @LeaderOnly(oncePerSlot = true)
    public Mono<Void> minuteReport() { // the slot is marked when the Mono completes
        return Mono.zip(leadership.reactiveSlot(), leadership.reactiveFencer())
                .flatMap(
                        slotAndFencer -> {
                            String slot = slotAndFencer.getT1().time().toString();
                            ReactiveFencer fencer = slotAndFencer.getT2();
                            // Fails with FenceRefusedException if a newer term exists: the
                            // slot then stays unmarked, and the next term runs it again.
                            return fencer.evalOrThrow(
                                    RECORD_ONCE, List.of(reportsKey, slotsKey), slot, "done");
                        });
    }

    // end::reactive[]

    /** Returns the key {@link #settle()} writes. */
    String settledKey() {
        return settledKey;
    }

    /** Returns the list of slots reported. */
    String slotsKey() {
        return slotsKey;
    }
}
