package io.redlease.boot.health;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of an application whose leader election is switched off ({@code redlease.enabled=false}):
 * always UP, with the details {@code enabled: false} and the reason. It stands in for the {@code
 * redlease} and {@code redleaseLeader} indicators, so that health groups naming them keep working:
 * with election off, every instance runs the leader-only work, so each answers UP as the leader
 * indicator would on the leader.
 */
public class RedleaseDisabledHealthIndicator extends AbstractHealthIndicator {

    private final String reason;

    /**
     * Creates the indicator.
     *
     * @param reason why leader election is off, reported in the details
     */
    public RedleaseDisabledHealthIndicator(String reason) {
        super("redlease health check failed");
        this.reason = reason;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.up().withDetail("enabled", false).withDetail("reason", reason);
    }
}
