package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.RepeatedTest;

/**
 * Steps under four threads racing execute, executeNow and timers, with steps that hand steps on (up
 * to three deep) and throw: every step runs once, one at a time, steps for the loop run on the loop
 * thread, queued steps run in hand-over order, and nothing is left behind.
 */
class StepsConcurrencyTests {

    private static final int THREADS = 4;

    private static final int OPS = 1500;

    /** One step's record. */
    static final class Rec {
        final int id;
        final String kind;
        volatile long start;
        volatile long end;
        volatile long ran = -1;
        volatile String thread;
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean immediate;

        Rec(int id, String kind) {
            this.id = id;
            this.kind = kind;
        }
    }

    private final AtomicLong clock = new AtomicLong();
    private final AtomicInteger ids = new AtomicInteger();
    private final List<Rec> all = new ArrayList<>();
    private final AtomicInteger inside = new AtomicInteger();
    private final Queue<String> violations = new ConcurrentLinkedQueue<>();
    private final ConcurrentHashMap<Integer, Rec> byId = new ConcurrentHashMap<>();
    private volatile Thread loopThread;
    private Steps steps;

    private synchronized Rec rec(String kind) {
        Rec rec = new Rec(ids.getAndIncrement(), kind);
        all.add(rec);
        byId.put(rec.id, rec);
        return rec;
    }

    private Runnable body(Rec rec, int depth) {
        return () -> {
            if (inside.incrementAndGet() != 1) {
                violations.add("two steps at once: " + rec.id);
            }
            try {
                rec.runs.incrementAndGet();
                rec.ran = clock.incrementAndGet();
                rec.thread = Thread.currentThread().getName();
                if (rec.kind.equals("execute") && Thread.currentThread() != loopThread) {
                    violations.add("execute step " + rec.id + " ran on " + rec.thread);
                }
                ThreadLocalRandom random = ThreadLocalRandom.current();
                if (depth < 3) {
                    int children = random.nextInt(3);
                    for (int i = 0; i < children; i++) {
                        // From inside a step: executeNow (handed on when inline, else queued)
                        Rec child = rec("nested");
                        child.start = clock.incrementAndGet();
                        steps.executeNow(body(child, depth + 1));
                        child.end = clock.incrementAndGet();
                    }
                    if (random.nextInt(10) == 0) {
                        Rec child = rec("execute");
                        child.start = clock.incrementAndGet();
                        steps.execute(body(child, depth + 1));
                        child.end = clock.incrementAndGet();
                    }
                }
                if (random.nextInt(20) == 0) {
                    throw new IllegalStateException("test: the step throws");
                }
            } finally {
                inside.decrementAndGet();
            }
        };
    }

    @RepeatedTest(2)
    void stepsRunOnceInOrderAndLeaveNothingBehind() throws Exception {
        ScheduledExecutorService loop =
                Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "steps-loop"));
        loopThread = loop.submit(Thread::currentThread).get();
        AtomicInteger errors = new AtomicInteger();
        steps = new Steps(loop, ex -> errors.incrementAndGet());
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        AtomicInteger timers = new AtomicInteger();
        AtomicInteger timersRan = new AtomicInteger();
        java.util.concurrent.CyclicBarrier barrier =
                new java.util.concurrent.CyclicBarrier(THREADS);
        for (int t = 0; t < THREADS; t++) {
            int which = t;
            Thread thread =
                    new Thread(
                            () -> {
                                try {
                                    go.await();
                                } catch (InterruptedException ex) {
                                    return;
                                }
                                ThreadLocalRandom random = ThreadLocalRandom.current();
                                for (int i = 0; i < OPS; i++) {
                                    try {
                                        barrier.await();
                                    } catch (Exception ex) {
                                        return;
                                    }
                                    if (which == 0) {
                                        long until = System.nanoTime() + 5_000_000;
                                        while (!steps.idle() && System.nanoTime() < until) {
                                            Thread.onSpinWait();
                                        }
                                    }
                                    try {
                                        barrier.await();
                                    } catch (Exception ex) {
                                        return;
                                    }
                                    if (random.nextBoolean()) {
                                        for (int k = random.nextInt(200); k > 0; k--) {
                                            Thread.onSpinWait();
                                        }
                                    }
                                    int op = random.nextInt(20);
                                    op = op < 14 ? 0 : op < 19 ? 7 : 9;
                                    if (op < 6) {
                                        Rec rec = rec("now");
                                        rec.start = clock.incrementAndGet();
                                        long before = rec.start;
                                        steps.executeNow(body(rec, 0));
                                        rec.end = clock.incrementAndGet();
                                        rec.immediate =
                                                rec.ran > before
                                                        && rec.ran < rec.end
                                                        && Thread.currentThread()
                                                                .getName()
                                                                .equals(rec.thread);
                                    } else if (op < 9) {
                                        Rec rec = rec("execute");
                                        rec.start = clock.incrementAndGet();
                                        steps.execute(body(rec, 0));
                                        rec.end = clock.incrementAndGet();
                                    } else {
                                        timers.incrementAndGet();
                                        steps.schedule(
                                                () -> {
                                                    timersRan.incrementAndGet();
                                                    // executeNow from a timer step
                                                    Rec rec = rec("nested");
                                                    rec.start = clock.incrementAndGet();
                                                    steps.executeNow(body(rec, 1));
                                                    rec.end = clock.incrementAndGet();
                                                },
                                                random.nextInt(50_000));
                                    }
                                    if (which == 0 && i % 100 == 0) {
                                        steps.exclusively(() -> {});
                                    }
                                }
                            },
                            "caller-" + t);
            threads.add(thread);
            thread.start();
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join(60_000);
        }
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () -> {
                            synchronized (this) {
                                return timersRan.get() == timers.get()
                                        && all.stream().allMatch(r -> r.runs.get() > 0)
                                        && steps.idle();
                            }
                        });
        List<Rec> snapshot;
        synchronized (this) {
            snapshot = new ArrayList<>(all);
        }
        for (Rec rec : snapshot) {
            if (rec.runs.get() != 1) {
                violations.add("step " + rec.id + " ran " + rec.runs.get() + " times");
            }
        }
        // FIFO: queued (not immediate) steps whose hand-over ended before another's began run
        // first.
        List<Rec> queued = snapshot.stream().filter(r -> !r.immediate && r.end > 0).toList();
        List<Rec> byEnd = new ArrayList<>(queued);
        byEnd.sort((a, b) -> Long.compare(a.end, b.end));
        List<Rec> byStart = new ArrayList<>(queued);
        byStart.sort((a, b) -> Long.compare(a.start, b.start));
        // For each B (by start), the max ran among A with end < start(B) must be < ran(B).
        int j = 0;
        long maxRan = -1;
        Rec maxRec = null;
        int orderViolations = 0;
        for (Rec b : byStart) {
            while (j < byEnd.size() && byEnd.get(j).end < b.start) {
                Rec a = byEnd.get(j);
                if (a.ran > maxRan) {
                    maxRan = a.ran;
                    maxRec = a;
                }
                j++;
            }
            if (maxRan > b.ran) {
                if (orderViolations++ < 5) {
                    violations.add(
                            "order: "
                                    + maxRec.kind
                                    + " "
                                    + maxRec.id
                                    + " ["
                                    + maxRec.start
                                    + ","
                                    + maxRec.end
                                    + "] ran "
                                    + maxRec.ran
                                    + " on "
                                    + maxRec.thread
                                    + " after "
                                    + b.kind
                                    + " "
                                    + b.id
                                    + " ["
                                    + b.start
                                    + ","
                                    + b.end
                                    + "] ran "
                                    + b.ran
                                    + " on "
                                    + b.thread);
                }
            }
        }
        long handedOnOnCallers =
                snapshot.stream()
                        .filter(r -> r.kind.equals("nested") && r.thread.startsWith("caller-"))
                        .count();
        long immediate = snapshot.stream().filter(r -> r.immediate).count();
        // The race reached the inline path and its handed-on steps, not only the loop.
        assertThat(immediate).isPositive();
        assertThat(handedOnOnCallers).isPositive();
        assertThat(errors.get()).isPositive();
        assertThat((Boolean) field(steps, "inline")).isFalse();
        assertThat((Integer) field(steps, "handedOn")).isZero();
        assertThat(((AtomicInteger) field(steps, "queued")).get()).isZero();
        assertThat((Queue<?>) field(steps, "pending")).isEmpty();
        loop.shutdownNow();
        assertThat(violations)
                .as("%d steps, %d order violations", snapshot.size(), orderViolations)
                .isEmpty();
    }

    private static Object field(Object owner, String name) throws Exception {
        Field field = owner.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(owner);
    }
}
