package io.redlease.boot.event;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.util.function.Supplier;
import org.springframework.context.ApplicationEventPublisher;

/**
 * An {@link Observer} that publishes {@link LeadershipEvent}s for one election.
 *
 * <p>The elector is looked up when the first event is published, since the observer is part of the
 * configuration the elector is built from.
 */
public final class LeadershipEventPublisher implements Observer {

    private final ApplicationEventPublisher publisher;

    private final String electionId;

    private final Supplier<Elections> elections;

    /**
     * Creates the publisher.
     *
     * @param publisher where to publish
     * @param electionId the election's id
     * @param elections the application's elections, where the elector is found
     */
    public LeadershipEventPublisher(
            ApplicationEventPublisher publisher, String electionId, Supplier<Elections> elections) {
        this.publisher = publisher;
        this.electionId = electionId;
        this.elections = elections;
    }

    private Elector elector() {
        return elections.get().get(electionId);
    }

    @Override
    public void onElected(long token) {
        publisher.publishEvent(new LeadershipGrantedEvent(elector(), electionId, token));
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        publisher.publishEvent(new LeadershipRevokedEvent(elector(), electionId, reason));
    }

    @Override
    public void onFollower() {
        publisher.publishEvent(new FollowerEvent(elector(), electionId));
    }

    @Override
    public String toString() {
        return "LeadershipEventPublisher[" + electionId + "]";
    }
}
