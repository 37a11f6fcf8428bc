package io.redlease.core;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Runs the steps of one {@link Campaign}, one at a time and in the order they were handed over: on
 * the run's loop thread, or at once on the thread that brings them ({@link #executeNow}) when no
 * other step of the run is running or waiting. A throwable that escapes a step goes to the run's
 * error handler.
 */
final class Steps {

    /** Set on a thread while it runs a step of any run; see {@link #inStep()}. */
    private static final ThreadLocal<@Nullable Boolean> STEPPING = new ThreadLocal<>();

    private final ScheduledExecutorService loop;

    private final Consumer<Throwable> onError;

    /** Held by the step that runs. */
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * Steps handed over and not begun yet, in the order they were handed over; taken only by the
     * holder of {@link #lock}. An inline step never overtakes one.
     */
    private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();

    /** How many steps {@link #pending} holds. */
    private final AtomicInteger queued = new AtomicInteger();

    /** Whether a step runs inline; guarded by {@link #lock}. */
    private boolean inline;

    /**
     * Steps in {@link #pending} that the inline step handed on, which no loop task takes yet;
     * guarded by {@link #lock}.
     */
    private int handedOn;

    Steps(ScheduledExecutorService loop, Consumer<Throwable> onError) {
        this.loop = loop;
        this.onError = onError;
    }

    /** Runs a step on the loop thread, after every step handed over before it. */
    void execute(Runnable step) {
        queued.incrementAndGet();
        pending.add(new Pending(step, false));
        loop.execute(this::runNext);
    }

    /**
     * Runs a step at once on the calling thread when no other step of the run is running or
     * waiting, else after them (on the loop thread, or on this thread if it runs the inline step
     * that handed this one on). For the events of a hand-off, on the thread that brings them: a
     * client's I/O thread, a stopping caller. Such a thread must never be held up: a step only
     * sends requests and hands work on, it never waits.
     */
    void executeNow(Runnable step) {
        if (inline && lock.isHeldByCurrentThread()) {
            // Handed on by the inline step this thread runs (a reply that came before its
            // dependent was attached, on a client whose replies and messages arrive on different
            // threads): after that step, on this thread, unless a step for the loop was handed
            // over before it.
            queued.incrementAndGet();
            pending.add(new Pending(step, true));
            handedOn++;
            return;
        }
        if (!lock.isHeldByCurrentThread() && lock.tryLock()) {
            try {
                if (queued.get() == 0) {
                    runInline(step);
                    return;
                }
            } finally {
                lock.unlock();
            }
        }
        execute(step);
    }

    /**
     * Runs a step inline, then the steps it handed on while they come first among the waiting
     * steps; from the first step for the loop on, the loop thread takes the rest, in order. Caller
     * holds the lock.
     */
    private void runInline(Runnable step) {
        inline = true;
        try {
            guarded(step);
            Pending next;
            while ((next = pending.peek()) != null && next.handedOn) {
                pending.poll();
                queued.decrementAndGet();
                handedOn--;
                guarded(next.step);
            }
        } finally {
            inline = false;
            // The handed-on steps left behind a step for the loop: the loop takes each in turn.
            for (; handedOn > 0; handedOn--) {
                loop.execute(this::runNext);
            }
        }
    }

    /** On the loop thread: runs the first waiting step, if any (an inline step may have run it). */
    private void runNext() {
        lock.lock();
        try {
            Pending next = pending.poll();
            if (next != null) {
                queued.decrementAndGet();
                guarded(next.step);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Runs an action holding the lock, unguarded, as a step would run: for the run's start. */
    void exclusively(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /** Returns whether no step is running or waiting (timers aside). */
    boolean idle() {
        return queued.get() == 0 && !lock.isLocked();
    }

    /**
     * Schedules a step on the loop thread. Cancelling it from a step means it does not run, even
     * when its time came while that step ran inline: its task then already waits for the lock, and
     * finds itself cancelled once it has it.
     */
    ScheduledFuture<?> schedule(Runnable step, long delayNanos) {
        Timer timer = new Timer(step);
        ScheduledFuture<?> future = loop.schedule(timer, delayNanos, TimeUnit.NANOSECONDS);
        timer.future = future;
        return future;
    }

    /**
     * Returns whether the calling thread runs a step of some run (on a loop thread or inline),
     * where code that waits for a run (a blocking stop) would wait for steps that cannot run.
     */
    static boolean inStep() {
        return STEPPING.get() != null;
    }

    private void guarded(Runnable step) {
        boolean outer = STEPPING.get() != null;
        STEPPING.set(Boolean.TRUE);
        try {
            step.run();
        } catch (Throwable ex) {
            if (ex instanceof VirtualMachineError error) {
                throw error;
            }
            onError.accept(ex);
        } finally {
            if (!outer) {
                STEPPING.remove();
            }
        }
    }

    /** A step handed over, and whether an inline step handed it on. */
    private record Pending(Runnable step, boolean handedOn) {}

    /** A scheduled step, skipped if its future was cancelled before it got the lock. */
    private final class Timer implements Runnable {

        private final Runnable step;

        private volatile @Nullable ScheduledFuture<?> future;

        Timer(Runnable step) {
            this.step = step;
        }

        @Override
        public void run() {
            lock.lock();
            try {
                ScheduledFuture<?> self = future;
                if (self == null || !self.isCancelled()) {
                    guarded(step);
                }
            } finally {
                lock.unlock();
            }
        }
    }
}
