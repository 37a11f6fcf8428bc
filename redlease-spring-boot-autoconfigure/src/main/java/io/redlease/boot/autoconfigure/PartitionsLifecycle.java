package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import io.redlease.core.partition.PartitionedElection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the partitioned elections once the application context is refreshed and stops them on
 * shutdown, in the phase of the elections ({@code redlease.shutdown-order}, after the listener
 * registries stopped): each leaves the member set, drains the work of its partitions' terms and
 * releases their leases, so the other instances take the partitions over at their next balancing
 * round.
 */
final class PartitionsLifecycle implements SmartLifecycle {

    private final Elections elections;

    private final Predicate<String> autoStartup;

    private final int phase;

    private volatile boolean running;

    PartitionsLifecycle(Elections elections, Predicate<String> autoStartup, int phase) {
        this.elections = elections;
        this.autoStartup = autoStartup;
        this.phase = phase;
    }

    @Override
    public void start() {
        elections
                .partitionedAsMap()
                .forEach(
                        (id, election) -> {
                            if (autoStartup.test(id) && !election.isRunning()) {
                                election.start();
                            }
                        });
        running = true;
    }

    /** Stops the partitioned elections in parallel, each on a thread of its own. */
    @Override
    public void stop(Runnable callback) {
        running = false;
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (PartitionedElection election : elections.partitionedAsMap().values()) {
            CompletableFuture<Void> closed = new CompletableFuture<>();
            Thread thread =
                    new Thread(
                            () -> {
                                try {
                                    election.stop();
                                } finally {
                                    closed.complete(null);
                                }
                            },
                            "redlease-partitions-close-" + election.name());
            thread.setDaemon(true);
            thread.start();
            closing.add(closed);
        }
        CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
                .whenComplete((ignored, error) -> callback.run());
    }

    @Override
    public void stop() {
        running = false;
        elections.partitionedAsMap().values().forEach(PartitionedElection::stop);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return phase;
    }
}
