package io.redlease.samples.jdbc;

import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Instant;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** The leader records, every second, that it is alive, fenced by its term's token. */
@Component
public class StatusWriter {

    private static final Log logger = LogFactory.getLog(StatusWriter.class);

    private final LeadershipContext leadership;

    private final FencedState state;

    public StatusWriter(LeadershipContext leadership, FencedState state) {
        this.leadership = leadership;
        this.state = state;
    }

    @Scheduled(fixedDelayString = "${sample.interval:1s}")
    @LeaderOnly
    public void recordStatus() {
        long token = leadership.requireFencer().token();
        String value = leadership.instanceId() + " at " + Instant.now();
        if (state.write("leader-status", value, token)) {
            logger.info("Recorded '" + value + "' with token " + token);
        } else {
            logger.warn("Token " + token + " is stale: a newer leader wrote first; not written");
        }
    }
}
