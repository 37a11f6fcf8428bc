package io.redlease.test;

import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One server shared by the whole test JVM, started on first use. A failure to start is remembered
 * and thrown again to every later caller, so a missing package costs one attempt and every test
 * that needs the server fails with the same message.
 */
final class SharedServer<T> {

    private final Supplier<T> starter;
    private final Predicate<T> closed;
    private @Nullable T server;
    private @Nullable RuntimeException failure;

    SharedServer(Supplier<T> starter, Predicate<T> closed) {
        this.starter = starter;
        this.closed = closed;
    }

    synchronized T get() {
        if (failure != null) {
            throw failure;
        }
        T current = server;
        if (current == null || closed.test(current)) {
            try {
                current = starter.get();
            } catch (RuntimeException ex) {
                failure = ex;
                throw ex;
            }
            server = current;
        }
        return current;
    }
}
