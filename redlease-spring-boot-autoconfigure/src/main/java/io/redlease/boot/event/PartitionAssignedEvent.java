package io.redlease.boot.event;

import io.redlease.core.partition.PartitionedElection;

/** This instance won a term of a partition. */
public class PartitionAssignedEvent extends PartitionEvent {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the event.
     *
     * @param election the partitioned election
     * @param partitionsId its id
     * @param partition the partition
     * @param token the term's fencing token
     */
    public PartitionAssignedEvent(
            PartitionedElection election, String partitionsId, int partition, long token) {
        super(election, partitionsId, partition, token);
    }

    @Override
    public String toString() {
        return "PartitionAssignedEvent["
                + getElection().name()
                + ", partition="
                + getPartition()
                + ", token="
                + getToken()
                + "]";
    }
}
