package io.redlease.samples.jdbc;

import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.jdbc.FencedOutException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** The leader settles a credit every second; the transaction is fenced by its term. */
@Component
public class SettlementJob {

    private static final Log logger = LogFactory.getLog(SettlementJob.class);

    private final Settlements settlements;

    private final LeadershipContext leadership;

    public SettlementJob(Settlements settlements, LeadershipContext leadership) {
        this.settlements = settlements;
        this.leadership = leadership;
    }

    // tag::job[]
    @Scheduled(fixedDelayString = "${sample.interval:1s}")
    @LeaderOnly
    public void settle() {
        try {
            LedgerEntry entry = settlements.settle("by " + leadership.instanceId());
            logger.info("Settled " + entry.getAmount() + " with token " + entry.getToken());
        } catch (FencedOutException ex) {
            logger.warn(
                    "Token "
                            + ex.token()
                            + " is stale (the table holds "
                            + ex.newerToken()
                            + "): a newer leader committed first; rolled back");
        }
    }
    // end::job[]
}
