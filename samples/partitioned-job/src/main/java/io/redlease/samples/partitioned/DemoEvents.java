package io.redlease.samples.partitioned;

import io.redlease.boot.event.PartitionAssignedEvent;
import io.redlease.boot.event.PartitionRevokedEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Writes one machine-readable line per partition assigned or revoked and per sync, which the demo
 * merges into its timeline: {@code DEMO|<epoch ms>|<instance>|<event>|partition=<p> token=<t> ...}.
 */
@Component
public class DemoEvents {

    private static final Log logger = LogFactory.getLog("io.redlease.samples.demo");

    void emit(String instance, String event, int partition, long token, String more) {
        logger.info(
                "DEMO|"
                        + System.currentTimeMillis()
                        + "|"
                        + instance
                        + "|"
                        + event
                        + "|partition="
                        + partition
                        + " token="
                        + token
                        + (more.isEmpty() ? "" : " " + more));
    }

    @EventListener
    void onAssigned(PartitionAssignedEvent event) {
        emit(
                event.getElection().instanceId(),
                "assigned",
                event.getPartition(),
                event.getToken(),
                "");
    }

    @EventListener
    void onRevoked(PartitionRevokedEvent event) {
        emit(
                event.getElection().instanceId(),
                "revoked",
                event.getPartition(),
                event.getToken(),
                "reason=" + event.getReason().tagValue());
    }
}
