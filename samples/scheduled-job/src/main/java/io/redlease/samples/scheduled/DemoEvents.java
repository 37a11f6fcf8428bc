package io.redlease.samples.scheduled;

import io.redlease.boot.event.FollowerEvent;
import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.boot.event.LeadershipRevokedEvent;
import io.redlease.core.LeadershipContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Writes one machine-readable line per leadership transition and report, which the demo merges into
 * its timeline: {@code DEMO|<epoch ms>|<instance>|<event>|<details>}.
 */
@Component
public class DemoEvents {

    private static final Log logger = LogFactory.getLog("io.redlease.samples.demo");

    private final LeadershipContext leadership;

    public DemoEvents(LeadershipContext leadership) {
        this.leadership = leadership;
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

    @EventListener
    void onFollower(FollowerEvent event) {
        emit("follower", "");
    }
}
