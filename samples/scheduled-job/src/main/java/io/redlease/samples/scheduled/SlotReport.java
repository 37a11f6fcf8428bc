package io.redlease.samples.scheduled;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.scheduling.SlotJobs;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A report per slot of a cron schedule, such as "the 12:00 report": exactly one per slot across
 * hand-offs and crashes, including a slot that came due while no instance led (the new leader
 * catches it up right after its election).
 *
 * <p>The report is appended through the fence, as {@code slot:instance:token}, so a leader whose
 * term is over cannot append one: the throwing form fails the run then, which leaves the slot
 * unmarked for the next term; redlease marks the slot complete, also through the fence, when the
 * method returns. A slot's run can be repeated (a term that ended after the report and before the
 * mark leaves the slot to the next term), so the report is keyed by its slot.
 */
@Component
public class SlotReport {

    private static final Logger logger = LoggerFactory.getLogger(SlotReport.class);

    /**
     * Appends {@code slot:instance:token} to the list of slot reports unless the slot already has
     * one: a run repeated after its term ended between this write and the slot's mark adds nothing.
     */
    static final String APPEND =
            "if redis.call('SADD', KEYS[3], ARGV[3]) == 1 then"
                    + " redis.call('RPUSH', KEYS[2], ARGV[2]) end";

    private final LeadershipContext leadership;

    private final DemoEvents events;

    private final Duration buildTime;

    private final String reportsKey;

    private final String reportedSlotsKey;

    public SlotReport(
            LeadershipContext leadership,
            DemoEvents events,
            SlotJobs slotJobs,
            @Value("${redlease.name}") String election,
            @Value("${sample.slot-report.build-time:300ms}") Duration buildTime) {
        this.leadership = leadership;
        this.events = events;
        this.buildTime = buildTime;
        this.reportsKey = election + ":slot-reports";
        this.reportedSlotsKey = election + ":slot-reports:slots";
        slotJobs.addListener(
                (job, slot, result, count) ->
                        events.emit(
                                "slot-" + result.tag(),
                                "slot=" + slot.toEpochMilli() + " count=" + count));
    }

    @Scheduled(cron = "${sample.slot-report.cron:*/5 * * * * *}")
    @LeaderOnly(oncePerSlot = true)
    public void report() throws InterruptedException {
        Slot slot = leadership.slot().orElseThrow();
        Fencer fencer = leadership.requireFencer();
        events.emit(
                "slot-start",
                "slot="
                        + slot.time().toEpochMilli()
                        + " token="
                        + fencer.token()
                        + " catchUp="
                        + slot.catchUp());
        // The log pattern shows the run's election, token and slot (logging.pattern.correlation).
        logger.info("building the report of slot {}", slot.time());
        Thread.sleep(buildTime.toMillis());
        long time = slot.time().toEpochMilli();
        // tag::fenced-slot-run[]
        try {
            // Throws unless the report landed: the run then fails, its slot stays unmarked, and
            // the next term runs the slot again.
            fencer.evalOrThrow(
                    APPEND,
                    List.of(reportsKey, reportedSlotsKey),
                    time + ":" + leadership.instanceId() + ":" + fencer.token(),
                    String.valueOf(time));
        } catch (FenceRefusedException refused) {
            events.emit("report-rejected", "slot=" + time + " token=" + fencer.token());
            throw refused;
        }
        // end::fenced-slot-run[]
        events.emit("report-applied", "slot=" + time + " token=" + fencer.token());
    }

    /** Returns the key of the list of slot reports. */
    public String reportsKey() {
        return reportsKey;
    }
}
