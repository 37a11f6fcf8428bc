package io.redlease.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/** An observer that records every callback with its time and thread, for assertions. */
final class Recorder implements Observer {

    /** One recorded callback. */
    record Event(String kind, long token, Object detail, long nanos, String thread) {}

    private final List<Event> events = new CopyOnWriteArrayList<>();

    @Override
    public void onElected(long token) {
        add("elected", token, "");
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        add("steppedDown", 0, reason);
    }

    @Override
    public void onFollower() {
        add("follower", 0, "");
    }

    @Override
    public void onError(Operation operation, Throwable error) {
        add("error", 0, new ErrorDetail(operation, error));
    }

    @Override
    public void onFencedWrite(boolean applied) {
        add(applied ? "applied" : "rejected", 0, "");
    }

    private void add(String kind, long token, Object detail) {
        events.add(
                new Event(
                        kind, token, detail, System.nanoTime(), Thread.currentThread().getName()));
    }

    List<Event> events() {
        return new ArrayList<>(events);
    }

    List<Event> events(String kind) {
        return events.stream().filter(event -> event.kind().equals(kind)).toList();
    }

    long count(String kind) {
        return events(kind).size();
    }

    List<Long> electedTokens() {
        return events("elected").stream().map(Event::token).toList();
    }

    List<Event> errors(Operation operation) {
        return events("error").stream()
                .filter(event -> ((ErrorDetail) event.detail()).operation() == operation)
                .toList();
    }

    List<String> kinds() {
        return events.stream().map(Event::kind).toList();
    }

    /**
     * Returns the kinds of events except acquire errors: an acquire can miss its bound on a loaded
     * machine, which changes nothing a sequence test is about.
     */
    List<String> kindsIgnoringAcquireErrors() {
        return events.stream()
                .filter(
                        event ->
                                !(event.detail() instanceof ErrorDetail detail
                                        && detail.operation() == Operation.ACQUIRE))
                .map(Event::kind)
                .toList();
    }

    /** Waits until at least {@code n} events of a kind were recorded and returns the n-th. */
    Event await(String kind, int n) {
        return await(kind, n, Duration.ofSeconds(10));
    }

    Event await(String kind, int n, Duration atMost) {
        Awaitility.await()
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(2))
                .until(() -> count(kind) >= n);
        return events(kind).get(n - 1);
    }

    void awaitEvent(Predicate<Event> condition) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(2))
                .until(() -> events.stream().anyMatch(condition));
    }

    /** The detail of an error event. */
    record ErrorDetail(Operation operation, Throwable error) {}
}
