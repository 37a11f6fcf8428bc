package io.redlease.core.partition;

import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Turns one partition's elector callbacks into {@link PartitionListener} calls. Its callbacks run
 * in order on the partition's lane, so the token of the term in progress needs no lock.
 */
final class PartitionObserver implements Observer {

    private static final Log logger = LogFactory.getLog(PartitionedElection.class);

    private final int partition;

    private final List<PartitionListener> listeners;

    private long token;

    PartitionObserver(int partition, List<PartitionListener> listeners) {
        this.partition = partition;
        this.listeners = listeners;
    }

    @Override
    public void onElected(long token) {
        this.token = token;
        for (PartitionListener listener : listeners) {
            try {
                listener.onAssigned(partition, token);
            } catch (RuntimeException | Error ex) {
                warn("onAssigned", listener, ex);
            }
        }
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        for (PartitionListener listener : listeners) {
            try {
                listener.onRevoked(partition, token, reason);
            } catch (RuntimeException | Error ex) {
                warn("onRevoked", listener, ex);
            }
        }
    }

    private void warn(String callback, PartitionListener listener, Throwable ex) {
        logger.warn(
                "redlease: partition listener "
                        + listener
                        + " failed in "
                        + callback
                        + " of partition "
                        + partition,
                ex);
    }
}
