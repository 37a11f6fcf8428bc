package io.redlease.samples.reactive;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * A report per slot of a cron schedule, built in a Reactor pipeline: exactly one per slot across
 * hand-offs and crashes. The slot is marked when the pipeline completes inside the term; the report
 * is appended through the reactive fence, as {@code slot:instance:token}, so a leader whose term is
 * over cannot append one: the throwing form fails the pipeline then, which leaves the slot unmarked
 * for the next term. A slot's run can be repeated (a term that ended after the report and before
 * the mark leaves the slot to the next term), so the report is keyed by its slot.
 */
@Component
public class SlotReport {

    /**
     * Appends {@code slot:instance:token} to the list of slot reports unless the slot already has
     * one: a run repeated after its term ended between this write and the slot's mark adds nothing.
     */
    static final String APPEND =
            "if redis.call('SADD', KEYS[3], ARGV[3]) == 1 then"
                    + " redis.call('RPUSH', KEYS[2], ARGV[2]) end";

    private final LeadershipContext leadership;

    private final Events events;

    private final Duration buildTime;

    private final String reportsKey;

    private final String reportedSlotsKey;

    public SlotReport(
            LeadershipContext leadership,
            Events events,
            @Value("${redlease.name}") String election,
            @Value("${sample.slot-report.build-time:300ms}") Duration buildTime) {
        this.leadership = leadership;
        this.events = events;
        this.buildTime = buildTime;
        this.reportsKey = election + ":slot-reports";
        this.reportedSlotsKey = election + ":slot-reports:slots";
    }

    @Scheduled(cron = "${sample.slot-report.cron:*/5 * * * * *}")
    @LeaderOnly(oncePerSlot = true)
    public Mono<Void> report() {
        return Mono.zip(leadership.reactiveSlot(), leadership.reactiveFencer())
                .flatMap(
                        slotAndFencer -> {
                            long slot = slotAndFencer.getT1().time().toEpochMilli();
                            long token = slotAndFencer.getT2().token();
                            events.emit("slot-start", "slot=" + slot + " token=" + token);
                            return Mono.delay(buildTime)
                                    .then(
                                            slotAndFencer
                                                    .getT2()
                                                    .evalOrThrow(
                                                            APPEND,
                                                            List.of(reportsKey, reportedSlotsKey),
                                                            slot
                                                                    + ":"
                                                                    + leadership.instanceId()
                                                                    + ":"
                                                                    + token,
                                                            String.valueOf(slot)))
                                    // A refusal fails the pipeline: the slot stays unmarked,
                                    // and the next term runs it again.
                                    .doOnError(
                                            FenceRefusedException.class,
                                            refused ->
                                                    events.emit(
                                                            "report-rejected",
                                                            "slot=" + slot + " token=" + token))
                                    .doOnSuccess(
                                            done ->
                                                    events.emit(
                                                            "report-applied",
                                                            "slot=" + slot + " token=" + token));
                        })
                .then();
    }

    /** Returns the key of the list of slot reports. */
    public String reportsKey() {
        return reportsKey;
    }
}
