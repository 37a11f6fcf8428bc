package io.redlease.docs.scheduling;

import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Instant;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** One report per slot of an hourly schedule, across hand-offs and failovers. */
@Component
class HourlyReport {

    private final LeadershipContext leadership;

    private final String reportsKey;

    private final String slotsKey;

    HourlyReport(LeadershipContext leadership, @Value("${redlease.name}") String election) {
        this.leadership = leadership;
        this.reportsKey = election + ":reports";
        this.slotsKey = election + ":reported-slots";
    }

    // tag::once-per-slot[]
    /** Records the slot's report unless the slot has one: a repeated run adds nothing. */
    static final String RECORD_ONCE =
            """
            if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 1 then
              redis.call('RPUSH', KEYS[3], ARGV[2])
            end
            """;

    @Scheduled(cron = "${reports.hourly.cron:0 0 * * * *}")
    @LeaderOnly(oncePerSlot = true)
    void publish() {
        Slot slot = leadership.slot().orElseThrow(); // the slot this run is for: "the 12:00 report"
        Fencer fencer = leadership.requireFencer();
        String time = slot.time().toString();
        // Throws FenceRefusedException if a newer term exists: the run fails, its slot stays
        // unmarked, and the next term runs it again.
        fencer.evalOrThrow(RECORD_ONCE, List.of(reportsKey, slotsKey), time, build(slot.time()));
    }

    // end::once-per-slot[]

    private static String build(Instant slot) {
        return "report for " + slot;
    }

    /** Returns the hash of reports by slot. */
    String reportsKey() {
        return reportsKey;
    }

    /** Returns the list of slots reported, in the order they were. */
    String slotsKey() {
        return slotsKey;
    }
}
