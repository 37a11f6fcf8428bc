package io.redlease.samples.jms;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.boot.event.LeadershipRevokedEvent;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Writes one machine-readable line per leadership transition, consumed order and drain: {@code
 * DEMO|<epoch ms>|<instance>|<event>|<details>}.
 */
@Component
public class Events implements LeaderLifecycles.Listener {

    private static final Log logger = LogFactory.getLog("io.redlease.samples.demo");

    private final LeadershipContext leadership;

    public Events(LeadershipContext leadership) {
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
    void onReady(ApplicationReadyEvent event) {
        emit("ready", "");
    }

    @EventListener
    void onGranted(LeadershipGrantedEvent event) {
        emit("elected", "token=" + event.getToken());
    }

    @EventListener
    void onRevoked(LeadershipRevokedEvent event) {
        emit("stepped-down", "reason=" + event.getReason().tagValue());
    }

    /** The listener container has stopped at the end of a term (before a graceful release). */
    @Override
    public void onDrained(String electionId, Elector elector, Duration drain) {
        emit("drained", "millis=" + drain.toMillis());
    }
}
