package io.redlease.boot.event;

import io.redlease.core.partition.PartitionedElection;
import org.springframework.context.ApplicationEvent;

/**
 * A partition of a partitioned election was assigned to or revoked from this instance; the source
 * is the {@link PartitionedElection}.
 *
 * <p>Events of one partition are published in order on that partition's callback lane (an
 * assignment is always followed by its revocation before the next assignment); events of different
 * partitions may be published concurrently and in any order.
 */
public abstract class PartitionEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final String partitionsId;

    private final int partition;

    private final long token;

    PartitionEvent(PartitionedElection election, String partitionsId, int partition, long token) {
        super(election);
        this.partitionsId = partitionsId;
        this.partition = partition;
        this.token = token;
    }

    /** Returns the partitioned election. */
    public PartitionedElection getElection() {
        return (PartitionedElection) getSource();
    }

    /** Returns the partitioned election's id ({@code redlease.partitions.<id>}). */
    public String getPartitionsId() {
        return partitionsId;
    }

    /** Returns the partition, from 0 to the partition count - 1. */
    public int getPartition() {
        return partition;
    }

    /** Returns the fencing token of the partition's term. */
    public long getToken() {
        return token;
    }
}
