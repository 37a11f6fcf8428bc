package io.redlease.benchmarks.jmh;

import io.redlease.core.Elector;
import io.redlease.core.Fencer;
import java.time.Duration;
import java.util.Optional;

/** Waits for an elector to lead, for benchmark set-up. */
final class Leadership {

    private Leadership() {}

    /** Returns the elector's fencer once it leads; fails after the timeout. */
    static Fencer await(Elector elector, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            Optional<Fencer> fencer = elector.fencer();
            if (fencer.isPresent()) {
                return fencer.get();
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException(elector + " did not lead within " + timeout);
    }
}
