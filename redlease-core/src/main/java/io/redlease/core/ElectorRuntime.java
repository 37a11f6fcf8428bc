package io.redlease.core;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The threads every elector in the JVM shares: a few single-threaded loops that run the election
 * state machines and nothing else, and the default executor for observer callbacks.
 *
 * <p>An elector is pinned to one loop for a whole run, so its steps never overlap. Redis calls do
 * not hold a loop: their replies arrive as futures and are handed back to it.
 *
 * <p>The callback executor keeps {@value #CALLBACK_THREADS} threads while callbacks run and none
 * when idle. A callback that blocks must not hold up other elections' callbacks, so when a queued
 * callback has waited longer than {@value #STALL_MILLIS} ms the executor adds a thread; the extra
 * threads end once idle.
 */
final class ElectorRuntime {

    private static final Log logger = LogFactory.getLog(ElectorRuntime.class);

    private static final int LOOP_THREADS =
            Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));

    static final int CALLBACK_THREADS = 2;

    static final long STALL_MILLIS = 100;

    /** Most callback threads, however many callbacks block at once. */
    static final int MAX_CALLBACK_THREADS = 256;

    private static final ElectorRuntime SHARED = new ElectorRuntime(LOOP_THREADS);

    private final ScheduledThreadPoolExecutor[] loops;

    private final AtomicInteger nextLoop = new AtomicInteger();

    private final ThreadPoolExecutor callbacks;

    private final LinkedBlockingQueue<Runnable> callbackQueue = new LinkedBlockingQueue<>();

    private @Nullable ScheduledFuture<?> stallCheck;

    /** How long a stopping leader keeps its release subscription after its release. */
    private final long handOffSettleNanos;

    ElectorRuntime(int loopThreads) {
        this(loopThreads, Campaign.HAND_OFF_SETTLE_NANOS);
    }

    ElectorRuntime(int loopThreads, long handOffSettleNanos) {
        this.handOffSettleNanos = handOffSettleNanos;
        this.loops = new ScheduledThreadPoolExecutor[loopThreads];
        for (int i = 0; i < loopThreads; i++) {
            String name = "redlease-loop-" + i;
            ScheduledThreadPoolExecutor loop =
                    new ScheduledThreadPoolExecutor(1, runnable -> new LoopThread(runnable, name));
            loop.setRemoveOnCancelPolicy(true);
            loops[i] = loop;
        }
        AtomicInteger callbackThreads = new AtomicInteger();
        this.callbacks =
                new ThreadPoolExecutor(
                        CALLBACK_THREADS,
                        MAX_CALLBACK_THREADS,
                        60,
                        TimeUnit.SECONDS,
                        callbackQueue,
                        runnable ->
                                daemon(
                                        runnable,
                                        "redlease-callback-" + callbackThreads.incrementAndGet()));
        callbacks.allowCoreThreadTimeOut(true);
    }

    /** See {@link Campaign#HAND_OFF_SETTLE_NANOS}; tests run with another. */
    long handOffSettleNanos() {
        return handOffSettleNanos;
    }

    static ElectorRuntime shared() {
        return SHARED;
    }

    /** Returns the shared default executor for observer callbacks. */
    static Executor callbacks() {
        return SHARED::executeCallback;
    }

    private void executeCallback(Runnable callback) {
        callbacks.execute(new Queued(callback));
        synchronized (callbacks) {
            if (stallCheck == null) {
                stallCheck =
                        loops[0].scheduleWithFixedDelay(
                                this::checkCallbackStall,
                                STALL_MILLIS,
                                STALL_MILLIS,
                                TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Adds a callback thread while queued callbacks wait too long (all threads are held by slow
     * callbacks), and returns to the base size once the queue is empty.
     */
    private void checkCallbackStall() {
        Runnable head = callbackQueue.peek();
        synchronized (callbacks) {
            int core = callbacks.getCorePoolSize();
            if (head instanceof Queued queued
                    && System.nanoTime() - queued.since
                            > TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS)) {
                if (core < MAX_CALLBACK_THREADS) {
                    callbacks.setCorePoolSize(core + 1);
                    if (core + 1 == MAX_CALLBACK_THREADS) {
                        logger.warn(
                                "redlease: "
                                        + MAX_CALLBACK_THREADS
                                        + " observer callbacks are blocked at once; later"
                                        + " callbacks wait for them");
                    }
                }
            } else if (head == null) {
                if (core > CALLBACK_THREADS) {
                    callbacks.setCorePoolSize(CALLBACK_THREADS);
                }
                if (callbacks.getActiveCount() == 0 && stallCheck != null) {
                    stallCheck.cancel(false);
                    stallCheck = null;
                }
            }
        }
    }

    /** Returns the loop for a new run, round-robin. */
    ScheduledExecutorService nextLoop() {
        return loops[Math.floorMod(nextLoop.getAndIncrement(), loops.length)];
    }

    /** Returns a loop other than the given one, for work that must not wait behind it. */
    ScheduledExecutorService otherLoop(ScheduledExecutorService loop) {
        for (int i = 0; i < loops.length; i++) {
            if (loops[i] == loop) {
                return loops[(i + 1) % loops.length];
            }
        }
        return loops[0];
    }

    /** Returns whether the calling thread is one of the election loops. */
    static boolean onLoopThread() {
        return Thread.currentThread() instanceof LoopThread;
    }

    static Thread daemon(Runnable runnable, String name) {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        return thread;
    }

    /** A queued callback with the time it was queued. */
    private record Queued(Runnable callback, long since) implements Runnable {

        Queued(Runnable callback) {
            this(callback, System.nanoTime());
        }

        @Override
        public void run() {
            callback.run();
        }
    }

    private static final class LoopThread extends Thread {

        LoopThread(Runnable runnable, String name) {
            super(runnable, name);
            setDaemon(true);
        }
    }
}
