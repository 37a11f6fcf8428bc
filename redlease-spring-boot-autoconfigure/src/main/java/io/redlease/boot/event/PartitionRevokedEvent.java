package io.redlease.boot.event;

import io.redlease.core.StepDownReason;
import io.redlease.core.partition.PartitionedElection;

/**
 * A term of a partition on this instance ended: handed over to balance the load ({@link
 * StepDownReason#SHUTDOWN}, as on close), lost or expired. The lease has been released, or the
 * release attempted.
 */
public class PartitionRevokedEvent extends PartitionEvent {

    private static final long serialVersionUID = 1L;

    private final StepDownReason reason;

    /**
     * Creates the event.
     *
     * @param election the partitioned election
     * @param partitionsId its id
     * @param partition the partition
     * @param token the token of the term that ended
     * @param reason why it ended
     */
    public PartitionRevokedEvent(
            PartitionedElection election,
            String partitionsId,
            int partition,
            long token,
            StepDownReason reason) {
        super(election, partitionsId, partition, token);
        this.reason = reason;
    }

    /** Returns why the term ended. */
    public StepDownReason getReason() {
        return reason;
    }

    @Override
    public String toString() {
        return "PartitionRevokedEvent["
                + getElection().name()
                + ", partition="
                + getPartition()
                + ", token="
                + getToken()
                + ", reason="
                + reason
                + "]";
    }
}
