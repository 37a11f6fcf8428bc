package io.redlease.samples.reactive;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.boot.event.LeadershipRevokedEvent;
import io.redlease.core.LeadershipContext;
import io.redlease.core.scheduling.SlotJobs;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Writes one machine-readable line per leadership transition and slot outcome: {@code DEMO|<epoch
 * ms>|<instance>|<event>|<details>}.
 */
@Component
public class Events {

    private static final Log logger = LogFactory.getLog("io.redlease.samples.demo");

    private final LeadershipContext leadership;

    public Events(LeadershipContext leadership, SlotJobs slotJobs) {
        this.leadership = leadership;
        slotJobs.addListener(
                (job, slot, result, count) ->
                        emit(
                                "slot-" + result.tag(),
                                "slot=" + slot.toEpochMilli() + " count=" + count));
    }

    void emit(String event, String details) {
        logger.info(
                "DEMO|"
                        + System.currentTimeMillis()
                        + "|"
                        + leadership.instanceId()
                        + "|"
                        + event
                        + "|"
                        + details);
    }

    @EventListener
    void onGranted(LeadershipGrantedEvent event) {
        emit("elected", "token=" + event.getToken());
    }

    @EventListener
    void onRevoked(LeadershipRevokedEvent event) {
        emit("stepped-down", "reason=" + event.getReason().tagValue());
    }
}
