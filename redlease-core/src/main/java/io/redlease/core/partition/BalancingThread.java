package io.redlease.core.partition;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The running part of a {@link PartitionedElection}: its balancing thread, which runs one {@link
 * Balancer} round after another while started, and the graceful leave on stop (the member entry
 * removed, then every partition's elector stopped, bounded by the drain timeout plus the time to
 * live). Started again after a stop, it joins anew.
 */
final class BalancingThread {

    private static final Log logger = LogFactory.getLog(BalancingThread.class);

    private final String name;

    private final PartitionedElectionConfig config;

    private final Balancer balancer;

    private final Membership membership;

    private final Object lifecycle = new Object();

    /** Held by a stop while it leaves, so that a start waits until the leave is done. */
    private final Object transitions = new Object();

    private @Nullable ScheduledThreadPoolExecutor balancing;

    private volatile @Nullable Throwable redisFailure;

    BalancingThread(PartitionedElectionConfig config, Balancer balancer, Membership membership) {
        this.name = config.name();
        this.config = config;
        this.balancer = balancer;
        this.membership = membership;
    }

    /** The failure of the last balancing round, or null when it succeeded. */
    @Nullable Throwable redisFailure() {
        return redisFailure;
    }

    boolean isRunning() {
        synchronized (lifecycle) {
            return balancing != null;
        }
    }

    /** Starts balancing on a thread of its own; see {@link PartitionedElection#start()}. */
    void start() {
        synchronized (transitions) {
            begin();
        }
    }

    /** Leaves gracefully; see {@link PartitionedElection#stop()}. */
    void stop() {
        synchronized (transitions) {
            end();
        }
    }

    private void begin() {
        synchronized (lifecycle) {
            if (balancing != null) {
                throw new IllegalStateException(
                        "redlease: partitioned election '" + name + "' is already running");
            }
            ScheduledThreadPoolExecutor executor =
                    new ScheduledThreadPoolExecutor(
                            1,
                            runnable -> {
                                Thread thread = new Thread(runnable, "redlease-partitions-" + name);
                                thread.setDaemon(true);
                                return thread;
                            });
            executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            balancing = executor;
            executor.execute(() -> round(executor));
        }
    }

    private void round(ScheduledThreadPoolExecutor executor) {
        long delay = config.balanceInterval().toNanos();
        try {
            delay = balancer.round();
            if (redisFailure != null) {
                logger.info("redlease: partitioned election '" + name + "' balances again");
            }
            redisFailure = null;
        } catch (RuntimeException ex) {
            if (redisFailure == null) {
                logger.warn(
                        "redlease: balancing round of partitioned election '"
                                + name
                                + "' failed; partitions held stay held, free ones wait",
                        ex);
            }
            redisFailure = ex;
        }
        try {
            executor.schedule(() -> round(executor), delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException ex) {
            // closed meanwhile: the leave is queued or done
        }
    }

    private void end() {
        ScheduledThreadPoolExecutor executor;
        synchronized (lifecycle) {
            executor = balancing;
            balancing = null;
        }
        if (executor == null) {
            return;
        }
        Duration bound = config.drainTimeout().plus(config.ttl());
        CompletableFuture<List<CompletableFuture<Void>>> leaving = new CompletableFuture<>();
        executor.execute(() -> leaving.complete(leave()));
        executor.shutdown();
        List<CompletableFuture<Void>> stops;
        try {
            stops = leaving.get(config.ttl().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            stops = List.of();
        } catch (ExecutionException | TimeoutException ex) {
            executor.shutdownNow();
            stops = balancer.stopAll();
        }
        try {
            CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new))
                    .get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException ex) {
            logger.warn(
                    "redlease: partitioned election '" + name + "' did not stop within " + bound,
                    ex);
        }
    }

    private List<CompletableFuture<Void>> leave() {
        try {
            membership.leave();
        } catch (RuntimeException ex) {
            logger.warn(
                    "redlease: partitioned election '"
                            + name
                            + "' could not leave the member set; the others count it out once its"
                            + " entry expires",
                    ex);
        }
        return balancer.stopAll();
    }
}
