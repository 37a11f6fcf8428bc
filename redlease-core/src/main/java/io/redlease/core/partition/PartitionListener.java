package io.redlease.core.partition;

import io.redlease.core.StepDownReason;

/**
 * Callbacks for the partitions this instance gains and loses.
 *
 * <p>Both methods have no-op defaults. The callbacks of one partition run in order, one at a time,
 * on that partition's election lane (its elector's observer lane): an assignment is always followed
 * by its revocation before the next assignment of the same partition. Callbacks of different
 * partitions may run concurrently and in any order. A listener that throws is logged at WARN and
 * disturbs neither the partition nor the balancing.
 */
public interface PartitionListener {

    /**
     * Called when this instance won a term of a partition.
     *
     * @param partition the partition, from 0 to the partition count - 1
     * @param token the term's fencing token, greater than every earlier term's of that partition
     */
    default void onAssigned(int partition, long token) {}

    /**
     * Called once the term of an assigned partition ended: handed over to balance the load, lost,
     * expired, or stepped down on close. The lease has been released (or the release was attempted)
     * when this runs.
     *
     * @param partition the partition
     * @param token the token of the term that ended
     * @param reason why it ended; {@link StepDownReason#SHUTDOWN} for a hand-over and a close
     */
    default void onRevoked(int partition, long token, StepDownReason reason) {}
}
