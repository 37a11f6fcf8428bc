package io.redlease.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Holds the loop threads of running electors with other work until closed, for tests that show a
 * step needs no loop thread. Whatever the runs had handed to those threads before runs first.
 */
final class HeldLoops implements AutoCloseable {

    private final CountDownLatch hold = new CountDownLatch(1);

    private HeldLoops() {}

    /** Returns once every loop thread of the electors' runs is held. */
    static HeldLoops of(Elector... electors) throws InterruptedException {
        HeldLoops held = new HeldLoops();
        Set<ScheduledExecutorService> loops = new HashSet<>();
        for (Elector elector : electors) {
            loops.add(elector.loop());
        }
        List<CountDownLatch> holding = new ArrayList<>();
        for (ScheduledExecutorService loop : loops) {
            CountDownLatch running = new CountDownLatch(1);
            holding.add(running);
            loop.execute(
                    () -> {
                        running.countDown();
                        try {
                            held.hold.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    });
        }
        for (CountDownLatch running : holding) {
            if (!running.await(10, TimeUnit.SECONDS)) {
                held.close();
                throw new IllegalStateException("a loop thread was not free within 10 s");
            }
        }
        return held;
    }

    /** Returns whether the loop threads are still held. */
    boolean holding() {
        return hold.getCount() == 1;
    }

    @Override
    public void close() {
        hold.countDown();
    }
}
