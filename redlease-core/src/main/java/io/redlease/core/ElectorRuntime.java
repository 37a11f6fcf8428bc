package io.redlease.core;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
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
 * Redis pool has a fixed maximum and idle threads end after 30 s; calls beyond it queue. A call the
 * loop stopped waiting for keeps its thread until the client gives up, so while Redis hangs later
 * calls wait in the queue; the loop's own bounds still end every wait on time.
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
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(
                        IO_THREADS,
                        IO_THREADS,
                        30,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        runnable -> daemon(runnable, "redlease-io-" + ioThreads.incrementAndGet()));
        pool.allowCoreThreadTimeOut(true);
        this.io = pool;
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
