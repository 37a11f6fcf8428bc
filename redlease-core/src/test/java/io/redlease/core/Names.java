package io.redlease.core;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.TestInfo;

/** Unique election names, so tests sharing one Redis never touch each other's keys. */
final class Names {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private Names() {}

    static String unique(TestInfo info) {
        String method = info.getTestMethod().map(m -> m.getName()).orElse("test");
        return "redlease-test:"
                + method
                + ":"
                + System.nanoTime()
                + "-"
                + SEQUENCE.incrementAndGet();
    }
}
