package io.redlease.boot.event;

import io.redlease.core.StepDownReason;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import java.util.function.Supplier;
import org.springframework.context.ApplicationEventPublisher;

/**
 * A {@link PartitionListener} that publishes {@link PartitionEvent}s for one partitioned election.
 * The election is looked up at the first event, since the listener is part of the configuration it
 * is built from.
 */
public final class PartitionEventPublisher implements PartitionListener {

    private final ApplicationEventPublisher publisher;

    private final String partitionsId;

    private final Supplier<PartitionedElection> election;

    /**
     * Creates the publisher.
     *
     * @param publisher where to publish
     * @param partitionsId the partitioned election's id
     * @param election supplies the partitioned election
     */
    public PartitionEventPublisher(
            ApplicationEventPublisher publisher,
            String partitionsId,
            Supplier<PartitionedElection> election) {
        this.publisher = publisher;
        this.partitionsId = partitionsId;
        this.election = election;
    }

    @Override
    public void onAssigned(int partition, long token) {
        publisher.publishEvent(
                new PartitionAssignedEvent(election.get(), partitionsId, partition, token));
    }

    @Override
    public void onRevoked(int partition, long token, StepDownReason reason) {
        publisher.publishEvent(
                new PartitionRevokedEvent(election.get(), partitionsId, partition, token, reason));
    }

    @Override
    public String toString() {
        return "PartitionEventPublisher[" + partitionsId + "]";
    }
}
