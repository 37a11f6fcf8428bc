package io.redlease.benchmarks.support;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Where the parent collects the events of its children; a waiter may register before or after the
 * event arrives. The first event per (child, kind, name) counts.
 */
public final class EventBoard {

    private record Key(long pid, String kind, String name) {}

    private final Map<Key, CompletableFuture<Event>> events = new ConcurrentHashMap<>();

    void post(Event event) {
        if (event.kind().equals("ERROR")) {
            System.err.println("child " + event.pid() + ": " + event.name() + " " + event.detail());
        }
        slot(event.pid(), event.kind(), event.name()).complete(event);
    }

    /**
     * Waits for an event of a child.
     *
     * @throws TimeoutException if it does not come in time
     */
    public Event await(ChildJvm child, String kind, String name, Duration timeout)
            throws TimeoutException, InterruptedException {
        try {
            return slot(child.pid(), kind, name).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException ex) {
            throw new IllegalStateException(ex.getCause());
        } catch (TimeoutException ex) {
            throw new TimeoutException(
                    child + " sent no " + kind + " for " + name + " within " + timeout);
        }
    }

    /** Forgets the events about one election, once a trial is done with it. */
    public void forget(String name) {
        events.keySet().removeIf(key -> key.name().equals(name));
    }

    private CompletableFuture<Event> slot(long pid, String kind, String name) {
        return events.computeIfAbsent(new Key(pid, kind, name), key -> new CompletableFuture<>());
    }
}
