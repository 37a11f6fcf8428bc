package io.redlease.core;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Admits calls into one run's terms and lets stopping wait for them: once closed it admits no new
 * call, and {@link #drained()} completes when the last one in flight has left.
 *
 * <p>Each run has its own gate, so a call that outlives a stopped run (it ignored its interrupt)
 * leaves a gate nobody waits on any more.
 */
final class CallGate {

    private final Map<Entry, Boolean> inFlight = new IdentityHashMap<>();

    private final CompletableFuture<Void> drained = new CompletableFuture<>();

    private boolean closed;

    /**
     * Admits a call made by the current thread.
     *
     * @param what what the call runs, for the log of calls still running at a forced stop
     * @return the admission, to pass to {@link #exit}; null when the gate is closed
     */
    synchronized @Nullable Entry enter(String what) {
        if (closed) {
            return null;
        }
        Entry entry = new Entry(Thread.currentThread(), what);
        inFlight.put(entry, Boolean.TRUE);
        return entry;
    }

    void exit(Entry entry) {
        boolean last;
        synchronized (this) {
            inFlight.remove(entry);
            last = closed && inFlight.isEmpty();
        }
        if (last) {
            drained.complete(null);
        }
    }

    /** Admits no new call; {@link #drained()} completes once none is in flight. */
    void close() {
        boolean empty;
        synchronized (this) {
            closed = true;
            empty = inFlight.isEmpty();
        }
        if (empty) {
            drained.complete(null);
        }
    }

    CompletableFuture<Void> drained() {
        return drained;
    }

    /** Describes the calls in flight, one line each: the thread and what it runs. */
    synchronized List<String> describeInFlight() {
        List<String> lines = new ArrayList<>(inFlight.size());
        for (Entry entry : inFlight.keySet()) {
            lines.add("thread '" + entry.thread.getName() + "' in " + entry.what);
        }
        return lines;
    }

    /** One admitted call. */
    static final class Entry {

        final Thread thread;

        final String what;

        Entry(Thread thread, String what) {
            this.thread = thread;
            this.what = what;
        }
    }
}
