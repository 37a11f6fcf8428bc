package io.redlease.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Everything that happened in one run, with {@link System#nanoTime()} timestamps (one monotonic
 * clock for the whole machine on Linux, so child JVMs' times compare with ours): every fenced write
 * attempt and its outcome, every election and step-down, every fault.
 */
final class History {

    enum Outcome {
        /** The fence accepted the write (or, for a mutant, the write was sent unfenced). */
        APPLIED,
        /** The fence refused the write: stale token. */
        REJECTED,
        /** The call failed; the write may or may not have been applied. */
        ERROR
    }

    record Write(
            String candidate,
            long token,
            long seq,
            long start,
            long end,
            Outcome outcome,
            String error) {}

    record Election(String candidate, long token, long at) {}

    record StepDown(String candidate, String reason, long at) {}

    record Fault(String what, long start, long healed) {}

    /** When a leader's task noticed its term had ended and stopped acting on it. */
    record TermEnd(String candidate, long token, long at) {}

    record Failure(String candidate, String operation, String error, long at) {}

    /** Receives every record as it is made, e.g. to stream a child JVM's history to its parent. */
    interface Sink {
        void accept(Object record);
    }

    private final Sink sink;

    History() {
        this(record -> {});
    }

    History(Sink sink) {
        this.sink = sink;
    }

    private final List<Write> writes = new CopyOnWriteArrayList<>();
    private final List<Election> elections = new CopyOnWriteArrayList<>();
    private final List<StepDown> stepDowns = new CopyOnWriteArrayList<>();
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final List<TermEnd> termEnds = new CopyOnWriteArrayList<>();
    private final List<Failure> failures = new CopyOnWriteArrayList<>();

    void write(Write write) {
        writes.add(write);
        sink.accept(write);
    }

    void elected(String candidate, long token, long at) {
        Election election = new Election(candidate, token, at);
        elections.add(election);
        sink.accept(election);
    }

    void steppedDown(String candidate, String reason, long at) {
        StepDown stepDown = new StepDown(candidate, reason, at);
        stepDowns.add(stepDown);
        sink.accept(stepDown);
    }

    void failed(String candidate, String operation, String error, long at) {
        Failure failure = new Failure(candidate, operation, error, at);
        failures.add(failure);
        sink.accept(failure);
    }

    void termEnded(String candidate, long token, long at) {
        termEnds.add(new TermEnd(candidate, token, at));
    }

    List<TermEnd> termEnds(String candidate) {
        return termEnds.stream().filter(t -> t.candidate().equals(candidate)).toList();
    }

    /** Records a fault that began at {@code start} and was healed at {@code healed}. */
    void fault(String what, long start, long healed) {
        faults.add(new Fault(what, start, healed));
    }

    /** A compact account of the run, for assertion messages. */
    String summary() {
        long t0 =
                elections.isEmpty()
                        ? 0
                        : elections.stream().mapToLong(Election::at).min().orElse(0);
        StringBuilder text = new StringBuilder("history (ms from the first election):");
        List<Object[]> events = new ArrayList<>();
        for (Election e : elections) {
            events.add(new Object[] {e.at(), e.candidate() + " elected " + e.token()});
        }
        for (StepDown s : stepDowns) {
            events.add(new Object[] {s.at(), s.candidate() + " stepped down " + s.reason()});
        }
        for (Failure f : failures) {
            String error = f.error().length() > 160 ? f.error().substring(0, 160) : f.error();
            events.add(
                    new Object[] {f.at(), f.candidate() + " " + f.operation() + " error " + error});
        }
        for (Fault f : faults) {
            events.add(new Object[] {f.start(), "fault " + f.what()});
        }
        java.util.Map<String, long[]> perTerm = new java.util.TreeMap<>();
        for (Write w : writes) {
            long[] counts =
                    perTerm.computeIfAbsent(w.candidate() + "/" + w.token(), k -> new long[3]);
            counts[w.outcome().ordinal()]++;
        }
        events.sort(java.util.Comparator.comparingLong(o -> (Long) o[0]));
        int from = Math.max(0, events.size() - 40);
        for (Object[] event : events.subList(from, events.size())) {
            text.append("\n  ")
                    .append(((Long) event[0] - t0) / 1_000_000)
                    .append(' ')
                    .append(event[1]);
        }
        text.append("\n  writes per term (applied/rejected/error): ");
        perTerm.forEach(
                (term, c) ->
                        text.append(term)
                                .append('=')
                                .append(c[0])
                                .append('/')
                                .append(c[1])
                                .append('/')
                                .append(c[2])
                                .append(' '));
        return text.toString();
    }

    List<Write> writes() {
        return new ArrayList<>(writes);
    }

    /**
     * The part of this history that was over before {@code t}: the writes that completed and the
     * terms reported elected before it (a write still in flight at {@code t} is left out).
     */
    History before(long t) {
        History prefix = new History();
        writes.stream().filter(w -> w.end() - t < 0).forEach(prefix.writes::add);
        elections.stream().filter(e -> e.at() - t < 0).forEach(prefix.elections::add);
        stepDowns.stream().filter(s -> s.at() - t < 0).forEach(prefix.stepDowns::add);
        return prefix;
    }

    List<Election> elections() {
        return new ArrayList<>(elections);
    }

    List<StepDown> stepDowns() {
        return new ArrayList<>(stepDowns);
    }

    List<Fault> faults() {
        return new ArrayList<>(faults);
    }

    List<Failure> failures() {
        return new ArrayList<>(failures);
    }

    List<Write> writes(String candidate) {
        return writes.stream().filter(w -> w.candidate().equals(candidate)).toList();
    }

    long count(Outcome outcome) {
        return writes.stream().filter(w -> w.outcome() == outcome).count();
    }

    List<Election> elections(String candidate) {
        return elections.stream().filter(e -> e.candidate().equals(candidate)).toList();
    }

    List<StepDown> stepDowns(String candidate) {
        return stepDowns.stream().filter(s -> s.candidate().equals(candidate)).toList();
    }
}
