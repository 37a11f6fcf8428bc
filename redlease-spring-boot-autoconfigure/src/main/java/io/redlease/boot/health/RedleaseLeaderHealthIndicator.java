package io.redlease.boot.health;

import io.redlease.core.Elector;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * Whether this instance leads an election, for a health group of its own (opt-in, {@code
 * redlease.health.leader.enabled}): {@code UP} while it leads, {@value #FOLLOWER} otherwise.
 *
 * <p>Keep it out of readiness and liveness: a leader-only check there makes every follower unready
 * (or restarted), and a rolling update waits for a new instance to become ready, which as a
 * follower it never does. {@value #FOLLOWER} is a status of its own, which the default status order
 * does not know, so it does not lower the overall health; a group such as {@code
 * management.endpoint.health.group.leader} with {@code status.order=follower,up} and {@code
 * status.http-mapping.follower=503} turns it into an answer a load balancer can route on.
 */
public class RedleaseLeaderHealthIndicator extends AbstractHealthIndicator {

    /** The status of an instance that does not lead. */
    public static final String FOLLOWER = "FOLLOWER";

    private final Elector elector;

    /**
     * Creates the indicator.
     *
     * @param elector the election to report on
     */
    public RedleaseLeaderHealthIndicator(Elector elector) {
        super("redlease leader check failed");
        this.elector = elector;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        (elector.isLeader() ? builder.up() : builder.status(new Status(FOLLOWER)))
                .withDetail("name", elector.name())
                .withDetail("instanceId", elector.instanceId())
                .withDetail("role", RedleaseHealthIndicator.role(elector));
    }
}
