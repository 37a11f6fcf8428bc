package io.redlease.core;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads every elector in the JVM shares: a few single-threaded loops that run the election
 * state machines, and a small pool that makes the blocking Redis calls those loops wait on.
 *
 * <p>An elector is pinned to one loop thread for a whole run, so its callbacks never overlap. The
 * Redis pool hands each call to an idle thread, starts a thread only when none is idle, up to a
 * fixed maximum, and queues calls beyond it; idle threads end after 30 s. So a few elections keep a
 * thread or two, and a thousand starting together share the maximum. A call the loop stopped
 * waiting for keeps its thread until the client gives up, so while Redis hangs later calls wait in
 * the queue; the loop's own bounds still end every wait on time.
 */
final class ElectorRuntime {

    private static final int LOOP_THREADS =
            Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));

    /**
     * Most threads for blocking Redis calls: plenty for calls to overlap, and for a few dozen to
     * hang on an unresponsive server without starving the rest, yet a thousand electors starting
     * together queue instead of each getting a thread.
     */
    static final int IO_THREADS = 64;

    private static final ElectorRuntime SHARED = new ElectorRuntime(LOOP_THREADS);

    private final ScheduledThreadPoolExecutor[] loops;

    private final ExecutorService io;

    private final AtomicInteger nextLoop = new AtomicInteger();

    ElectorRuntime(int loopThreads) {
        this.loops = new ScheduledThreadPoolExecutor[loopThreads];
        for (int i = 0; i < loopThreads; i++) {
            String name = "redlease-loop-" + i;
            ScheduledThreadPoolExecutor loop =
                    new ScheduledThreadPoolExecutor(1, runnable -> new LoopThread(runnable, name));
            loop.setRemoveOnCancelPolicy(true);
            loops[i] = loop;
        }
        AtomicInteger ioThreads = new AtomicInteger();
        IdleFirstQueue queue = new IdleFirstQueue();
        this.io =
                new ThreadPoolExecutor(
                        0,
                        IO_THREADS,
                        30,
                        TimeUnit.SECONDS,
                        queue,
                        runnable -> daemon(runnable, "redlease-io-" + ioThreads.incrementAndGet()),
                        (task, pool) -> {
                            if (pool.isShutdown()) {
                                throw new RejectedExecutionException("redlease: runtime shut down");
                            }
                            queue.enqueue(task);
                        });
    }

    /**
     * The Redis pool's queue. A task offered by the pool goes straight to an idle thread or is
     * refused, and a refusal makes the pool start a thread; only once the pool is at its maximum
     * does the pool's rejection handler queue the task for the next thread that frees up.
     */
    private static final class IdleFirstQueue extends LinkedTransferQueue<Runnable> {

        @Override
        public boolean offer(Runnable task) {
            return tryTransfer(task);
        }

        void enqueue(Runnable task) {
            super.offer(task);
        }
    }

    static ElectorRuntime shared() {
        return SHARED;
    }

    /** Returns the loop for a new run, round-robin. */
    ScheduledExecutorService nextLoop() {
        return loops[Math.floorMod(nextLoop.getAndIncrement(), loops.length)];
    }

    ExecutorService io() {
        return io;
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

    private static final class LoopThread extends Thread {

        LoopThread(Runnable runnable, String name) {
            super(runnable, name);
            setDaemon(true);
        }
    }
}
