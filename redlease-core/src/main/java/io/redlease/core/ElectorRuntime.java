package io.redlease.core;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads every elector in the JVM shares: a few single-threaded loops that run the election
 * state machines, and a pool that makes the blocking Redis calls those loops wait on.
 *
 * <p>An elector is pinned to one loop thread for a whole run, so its callbacks never overlap. The
 * Redis pool grows with the calls in flight and shrinks when idle; a call the loop stopped waiting
 * for keeps its thread until the client gives up.
 */
final class ElectorRuntime {

    private static final int LOOP_THREADS =
            Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));

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
        this.io =
                new ThreadPoolExecutor(
                        0,
                        Integer.MAX_VALUE,
                        30,
                        TimeUnit.SECONDS,
                        new SynchronousQueue<>(),
                        runnable -> daemon(runnable, "redlease-io-" + ioThreads.incrementAndGet()));
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
