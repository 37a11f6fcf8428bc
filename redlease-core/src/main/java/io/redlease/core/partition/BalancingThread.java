package io.redlease.core.partition;

import io.redlease.core.ReleaseWatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.IntConsumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The running part of a {@link PartitionedElection}: its balancing thread, which runs one {@link
 * Balancer} round after another while started, and the graceful leave on stop (the member entry
 * removed, then every partition's elector stopped; bounded as {@link PartitionedElection#stop()}
 * says). Started again after a stop, it joins anew.
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

    /**
     * Opens, for a run, the watch of the other instances' releases that calls the given wake-up, or
     * returns null.
     */
    private final Function<IntConsumer, @Nullable ReleaseWatch> watches;

    /** The watch of this run; guarded by {@link #lifecycle}. */
    private @Nullable ReleaseWatch watch;

    /** Whether a round is queued to run at once. */
    private final AtomicBoolean woken = new AtomicBoolean();

    /** The next regular round; confined to the balancing thread. */
    private @Nullable ScheduledFuture<?> next;

    /**
     * When the last round ended (nanos) and how long it took: with thousands of partitions (a round
     * reads every lease key) a woken round waits as long after the end of the last, so that a burst
     * of releases keeps the thread busy half the time at most.
     */
    private volatile long lastEnd;

    private volatile long lastTook;

    /**
     * Above this many partitions, woken rounds are spaced; below, a round is cheap, and spacing
     * would only add the delays of a loaded machine to every move.
     */
    static final int SPACED_PARTITIONS = 1024;

    private final boolean spaced;

    private volatile @Nullable Throwable redisFailure;

    BalancingThread(
            PartitionedElectionConfig config,
            Balancer balancer,
            Membership membership,
            Function<IntConsumer, @Nullable ReleaseWatch> watches) {
        this.name = config.name();
        this.config = config;
        this.balancer = balancer;
        this.membership = membership;
        this.watches = watches;
        this.spaced = config.partitions() > SPACED_PARTITIONS;
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
            executor.setRemoveOnCancelPolicy(true);
            balancing = executor;
            // A spaced wake-up the last run's executor dropped at its shutdown never cleared this.
            woken.set(false);
            balancer.joining();
            ReleaseWatch opened = watches.apply(this::heard);
            watch = opened;
            if (opened != null) {
                opened.subscribe();
            }
            executor.execute(() -> round(executor));
        }
    }

    /**
     * Runs a round now (or as long after the running one as that one took) instead of waiting for
     * the next regular one; several wake-ups meanwhile make one round. Called when another instance
     * releases a partition (a leaver's first release tells the others of its leave, a hand-over
     * frees a partition for whoever is below its share).
     */
    void wake() {
        heard(-1);
    }

    /**
     * Another instance released a partition (or, with -1, the release subscription landed; with the
     * partition count, a member joined or left): wakes a round unless this instance campaigns for
     * the partition already or its last look dealt it to another member, whose campaign takes it.
     */
    private void heard(int index) {
        int partition = index < config.partitions() ? index : -1; // else a member joined or left
        if (partition >= 0) {
            balancer.released(partition);
        }
        boolean take = partition >= 0 && balancer.awaits(partition);
        if (partition >= 0 && !take && !balancer.needsRound(partition)) {
            return;
        }
        ScheduledThreadPoolExecutor executor;
        synchronized (lifecycle) {
            executor = balancing;
        }
        if (executor == null) {
            return;
        }
        if (!take) {
            wake(executor);
            return;
        }
        try {
            executor.execute(
                    () -> {
                        synchronized (lifecycle) {
                            if (balancing != executor) {
                                return;
                            }
                        }
                        balancer.take(partition);
                    });
        } catch (RejectedExecutionException ex) {
            // stopped meanwhile
        }
    }

    private void wake(ScheduledThreadPoolExecutor executor) {
        if (woken.compareAndSet(false, true)) {
            woken(executor);
        }
    }

    /**
     * Runs the round a wake-up asked for; with more than {@value #SPACED_PARTITIONS} partitions,
     * once as long has passed since the last as it took.
     */
    private void woken(ScheduledThreadPoolExecutor executor) {
        long wait = spaced ? lastEnd + lastTook - System.nanoTime() : 0;
        try {
            if (wait > 0) {
                executor.schedule(() -> woken(executor), wait, TimeUnit.NANOSECONDS);
            } else {
                executor.execute(
                        () -> {
                            if (spaced && lastEnd + lastTook - System.nanoTime() > 0) {
                                woken(executor); // a round ran meanwhile
                                return;
                            }
                            woken.set(false);
                            round(executor);
                        });
            }
        } catch (RejectedExecutionException ex) {
            woken.set(false); // stopped meanwhile
        }
    }

    private void round(ScheduledThreadPoolExecutor executor) {
        synchronized (lifecycle) {
            if (balancing != executor) {
                return; // stopping: a round woken just before must not join again after the leave
            }
        }
        ScheduledFuture<?> scheduled = next;
        if (scheduled != null) {
            scheduled.cancel(false);
            next = null;
        }
        long delay = config.balanceInterval().toNanos();
        long began = System.nanoTime();
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
        long ended = System.nanoTime();
        lastTook = ended - began;
        lastEnd = ended;
        ReleaseWatch listening;
        synchronized (lifecycle) {
            listening = balancing == executor ? watch : null;
        }
        if (listening != null) {
            listening.subscribe(); // again, if it failed or was lost
        }
        try {
            next = executor.schedule(() -> round(executor), delay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException ex) {
            // closed meanwhile: the leave is queued or done
        }
    }

    private void end() {
        ScheduledThreadPoolExecutor executor;
        ReleaseWatch closing;
        synchronized (lifecycle) {
            executor = balancing;
            closing = watch;
            balancing = null;
            watch = null;
        }
        if (executor == null) {
            return;
        }
        // A round under way campaigns for nothing more; the leave runs after it.
        balancer.leaving();
        CompletableFuture<Void> unsubscribed =
                closing == null ? CompletableFuture.completedFuture(null) : closing.close();
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
            logger.warn(
                    "redlease: partitioned election '"
                            + name
                            + "' did not leave on its balancing thread within "
                            + config.ttl()
                            + " (a round waiting on Redis); leaving from the stopping thread");
            stops = leaveFromStoppingThread();
        }
        stops = new ArrayList<>(stops);
        stops.add(unsubscribed);
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
            couldNotLeave(ex);
        }
        return balancer.stopAll();
    }

    /**
     * The leave of a stop whose balancing thread has not run it in time: the member entry is
     * removed on a thread of its own ({@link Membership#removeEntry()} leaves the view of the
     * members, still the balancing thread's, alone), waited for at most a time to live, so a Redis
     * that holds the removal up holds the stop up no longer than that; the partitions are stopped
     * then, and the removal is among what the stop waits for.
     */
    private List<CompletableFuture<Void>> leaveFromStoppingThread() {
        CompletableFuture<Void> removed = new CompletableFuture<>();
        Thread removing =
                new Thread(
                        () -> {
                            try {
                                membership.removeEntry();
                            } catch (RuntimeException ex) {
                                couldNotLeave(ex);
                            } finally {
                                removed.complete(null);
                            }
                        },
                        "redlease-partitions-leave-" + name);
        removing.setDaemon(true);
        try {
            removing.start();
            removed.get(config.ttl().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException ex) {
            // Still waiting on Redis: the partitions stop meanwhile, and the stop waits for both.
        } catch (RuntimeException | Error ex) {
            removed.complete(null); // no thread for the removal: the entry lapses
            couldNotLeave(new IllegalStateException("redlease: no thread for the leave", ex));
        }
        List<CompletableFuture<Void>> stops = new ArrayList<>(balancer.stopAll());
        stops.add(removed);
        return stops;
    }

    private void couldNotLeave(RuntimeException ex) {
        logger.warn(
                "redlease: partitioned election '"
                        + name
                        + "' could not leave the member set; the others count it out once its"
                        + " entry expires",
                ex);
    }
}
