package io.redlease.core;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One election's serial lane: runs its observer callbacks one at a time, in order, on an executor,
 * never on the engine's threads. A slow callback delays only the later callbacks of its own lane.
 *
 * <p>The queue is bounded. When {@value #WARN_PENDING} callbacks wait, a WARN names the callback
 * that holds the lane and for how long; beyond {@value #MAX_PENDING} new callbacks are dropped and
 * counted, with a WARN, so a callback that never returns cannot exhaust memory.
 */
final class Lane {

    private static final Log logger = LogFactory.getLog(Lane.class);

    static final int WARN_PENDING = 100;

    static final int MAX_PENDING = 1_000;

    /** How many callbacks one turn on the executor runs before yielding it to other lanes. */
    private static final int BATCH = 16;

    private static final ThreadLocal<@Nullable Lane> running = new ThreadLocal<>();

    /** The lane whose turn the calling thread is handing to the executor. */
    private static final ThreadLocal<@Nullable Lane> dispatching = new ThreadLocal<>();

    private final String election;

    private final Executor executor;

    private final ArrayDeque<Callback> queue = new ArrayDeque<>();

    // Guarded by queue.
    private boolean scheduled;

    private boolean warned;

    private long dropped;

    private @Nullable Callback current;

    /** Whether the WARN for an executor that ran a turn on an engine thread was logged. */
    private volatile boolean warnedDirect;

    private volatile boolean warnedFailing;

    private @Nullable Thread currentThread;

    private long currentSince;

    Lane(String election, Executor executor) {
        this.election = election;
        this.executor = executor;
    }

    /** Returns whether the calling thread is running a callback of this lane. */
    boolean isCurrentThread() {
        return running.get() == this;
    }

    /**
     * Queues a callback.
     *
     * @param what the callback's name for logs, such as {@code onElected}
     */
    void submit(String what, Runnable action) {
        Callback callback = new Callback(what, action);
        boolean schedule;
        synchronized (queue) {
            if (queue.size() >= MAX_PENDING) {
                dropped++;
                if (dropped == 1 || dropped % MAX_PENDING == 0) {
                    logger.warn(
                            "redlease: "
                                    + dropped
                                    + " callback(s) of '"
                                    + election
                                    + "' dropped ("
                                    + what
                                    + " the latest): "
                                    + MAX_PENDING
                                    + " are waiting behind "
                                    + describeCurrent());
                }
                return;
            }
            queue.add(callback);
            if (queue.size() == WARN_PENDING && !warned) {
                warned = true;
                logger.warn(
                        "redlease: "
                                + WARN_PENDING
                                + " callbacks of '"
                                + election
                                + "' are waiting behind "
                                + describeCurrent()
                                + "; observers and event listeners should return quickly");
            }
            schedule = !scheduled;
            scheduled = true;
        }
        if (schedule) {
            dispatch();
        }
    }

    /** Returns the number of callbacks dropped because the queue was full. */
    long dropped() {
        synchronized (queue) {
            return dropped;
        }
    }

    /** Describes the callback running now, for logs; guarded by queue. */
    private String describeCurrent() {
        Callback callback = current;
        Thread thread = currentThread;
        if (callback == null || thread == null) {
            return "no running callback";
        }
        return callback.what
                + " on thread '"
                + thread.getName()
                + "', running for "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - currentSince)
                + " ms";
    }

    private void dispatch() {
        // A turn handed over from one of the engine's threads (a loop thread, or a step inline on
        // a Redis client's I/O thread or a stopping caller) must not run on that thread.
        @Nullable Lane outer = dispatching.get();
        if (ElectorRuntime.onLoopThread() || Steps.inStep()) {
            dispatching.set(this);
        }
        // One turn, whoever runs it: an executor that throws may have run or queued it already.
        Turn turn = new Turn();
        try {
            executor.execute(turn);
        } catch (RuntimeException ex) {
            // The application's executor is shutting down (or failed): finish on the engine's own,
            // so that this lane's callbacks go on.
            if (!(ex instanceof RejectedExecutionException) && !warnedFailing) {
                warnedFailing = true;
                logger.warn(
                        "redlease: the callback executor of '"
                                + election
                                + "' failed to take a callback; such callbacks run on redlease's"
                                + " own callback pool",
                        ex);
            }
            ElectorRuntime.callbacks().execute(turn);
        } finally {
            dispatching.set(outer);
        }
    }

    private void drain() {
        if (dispatching.get() == this) {
            // The executor ran the turn on the engine's thread that handed it over (a direct
            // executor, or a pool that runs tasks on the caller when full): run it on the
            // engine's own callback pool instead.
            if (!warnedDirect) {
                warnedDirect = true;
                logger.warn(
                        "redlease: the callback executor of '"
                                + election
                                + "' ran a callback on the engine's thread that queued it (a"
                                + " direct executor such as SyncTaskExecutor, or a pool that runs"
                                + " tasks on the caller when full); such callbacks run on"
                                + " redlease's own callback pool instead");
            }
            ElectorRuntime.callbacks().execute(this::drain);
            return;
        }
        running.set(this);
        try {
            for (int i = 0; i < BATCH; i++) {
                Callback callback;
                synchronized (queue) {
                    callback = queue.poll();
                    if (callback == null) {
                        scheduled = false;
                        warned = false;
                        return;
                    }
                    current = callback;
                    currentThread = Thread.currentThread();
                    currentSince = System.nanoTime();
                }
                try {
                    callback.action.run();
                } catch (Throwable ex) {
                    if (ex instanceof VirtualMachineError error) {
                        throw error;
                    }
                    logger.warn(
                            "redlease: callback " + callback.what + " of '" + election + "' failed",
                            ex);
                } finally {
                    synchronized (queue) {
                        current = null;
                        currentThread = null;
                    }
                }
            }
        } finally {
            running.remove();
        }
        // More are waiting: take another turn, behind other lanes' work.
        dispatch();
    }

    private record Callback(String what, Runnable action) {}

    /** A turn of the lane, run at most once. */
    private final class Turn implements Runnable {

        private final AtomicBoolean claimed = new AtomicBoolean();

        @Override
        public void run() {
            if (claimed.compareAndSet(false, true)) {
                drain();
            }
        }
    }
}
