package io.redlease.reliability;

import io.redlease.reliability.History.Election;
import io.redlease.reliability.History.Outcome;
import io.redlease.reliability.History.Write;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Checks a run's history, and the log of applied writes read back from Redis, for violations of the
 * fencing guarantee.
 *
 * <p>What it asserts, each sound on its own (no false alarm when the fence works):
 *
 * <ol>
 *   <li><b>Log order</b>: in the order Redis applied them, tokens never decrease.
 *   <li><b>No write under a newer term</b>: when a write was applied, the token counter (read in
 *       the same script) was not above its token, i.e. no later term had been elected yet.
 *   <li><b>Elected before sent</b>: no applied write was <em>sent</em> after a term with a greater
 *       token had been <em>reported elected</em> (its acquire had completed at Redis). The converse
 *       cannot be asserted: a write sent before an election may arrive after it, and is then
 *       rejected; only the log tells the order at Redis.
 *   <li><b>Real-time order</b>: if applied write A completed before applied write B was sent, B's
 *       token is not below A's (used when the log itself was lost, e.g. a restart without
 *       persistence).
 *   <li><b>Unique tokens</b>: no token was elected twice, and each candidate's tokens increase.
 *   <li><b>No lost or phantom write</b>: every write reported applied is in the log, and no write
 *       reported rejected is (only checked when the log is expected to be complete).
 * </ol>
 */
final class Checker {

    /** The outcome of a check. */
    record Report(
            List<String> violations,
            int logEntries,
            long applied,
            long rejected,
            long errors,
            int elections) {

        boolean ok() {
            return violations.isEmpty();
        }

        @Override
        public String toString() {
            return "Report[elections="
                    + elections
                    + ", log="
                    + logEntries
                    + ", applied="
                    + applied
                    + ", rejected="
                    + rejected
                    + ", errors="
                    + errors
                    + ", violations="
                    + violations.size()
                    + (violations.isEmpty()
                            ? ""
                            : ": " + violations.subList(0, Math.min(5, violations.size())))
                    + "]";
        }
    }

    private Checker() {}

    /**
     * Checks the history against the log.
     *
     * @param history the run's history
     * @param log the applied writes read from Redis, or null when the log was lost
     * @param logComplete whether every applied write must be in the log (false when data loss is
     *     part of the scenario)
     */
    static Report check(History history, @Nullable List<FencedLog.Entry> log, boolean logComplete) {
        List<String> violations = new ArrayList<>();
        List<Write> writes = history.writes();
        List<Election> elections = history.elections();

        // Which writes were applied: the log says so when we have it; else the client's verdict.
        Set<String> inLog = new HashSet<>();
        if (log != null) {
            long previous = Long.MIN_VALUE;
            for (FencedLog.Entry entry : log) {
                inLog.add(key(entry.candidate(), entry.token(), entry.seq()));
                if (entry.token() < previous) {
                    violations.add(
                            "log order: token "
                                    + entry.token()
                                    + " (seq "
                                    + entry.seq()
                                    + " by "
                                    + entry.candidate()
                                    + ") applied after token "
                                    + previous);
                }
                previous = Math.max(previous, entry.token());
                if (entry.counter() > entry.token()) {
                    violations.add(
                            "newer term: token "
                                    + entry.token()
                                    + " (seq "
                                    + entry.seq()
                                    + " by "
                                    + entry.candidate()
                                    + ") applied when term "
                                    + entry.counter()
                                    + " had been elected");
                }
            }
        }
        List<Write> applied = new ArrayList<>();
        for (Write write : writes) {
            boolean logged = inLog.contains(key(write.candidate(), write.token(), write.seq()));
            if (log != null && logComplete) {
                if (write.outcome() == Outcome.APPLIED && !logged) {
                    violations.add(
                            "lost write: " + write + " was reported applied but is not in the log");
                }
                if (write.outcome() == Outcome.REJECTED && logged) {
                    violations.add(
                            "phantom write: " + write + " was reported rejected but is in the log");
                }
            }
            if (write.outcome() == Outcome.APPLIED
                    || (logged && write.outcome() == Outcome.ERROR)) {
                applied.add(write);
            }
        }

        // Elected before sent.
        List<Election> byTime = new ArrayList<>(elections);
        byTime.sort(Comparator.comparingLong(Election::at));
        for (Write write : applied) {
            for (Election election : byTime) {
                if (election.at() - write.start() >= 0) {
                    break;
                }
                if (election.token() > write.token()) {
                    violations.add(
                            "stale write: token "
                                    + write.token()
                                    + " (seq "
                                    + write.seq()
                                    + " by "
                                    + write.candidate()
                                    + ") applied although sent "
                                    + (write.start() - election.at()) / 1_000_000
                                    + " ms after term "
                                    + election.token()
                                    + " was elected");
                    break;
                }
            }
        }

        // Real-time order of applied writes.
        List<Write> byEnd = new ArrayList<>(applied);
        byEnd.sort(Comparator.comparingLong(Write::end));
        List<Write> byStart = new ArrayList<>(applied);
        byStart.sort(Comparator.comparingLong(Write::start));
        long maxTokenEnded = Long.MIN_VALUE;
        int e = 0;
        for (Write write : byStart) {
            while (e < byEnd.size() && byEnd.get(e).end() - write.start() < 0) {
                maxTokenEnded = Math.max(maxTokenEnded, byEnd.get(e).token());
                e++;
            }
            if (write.token() < maxTokenEnded) {
                violations.add(
                        "real-time order: token "
                                + write.token()
                                + " (seq "
                                + write.seq()
                                + " by "
                                + write.candidate()
                                + ") applied after a write with token "
                                + maxTokenEnded
                                + " had completed");
            }
        }

        // Unique tokens; increasing per candidate.
        Map<Long, Election> seen = new HashMap<>();
        Map<String, Long> lastByCandidate = new HashMap<>();
        for (Election election : byTime) {
            Election earlier = seen.putIfAbsent(election.token(), election);
            if (earlier != null) {
                violations.add(
                        "duplicate token "
                                + election.token()
                                + ": elected by "
                                + earlier.candidate()
                                + " and again by "
                                + election.candidate());
            }
            Long last = lastByCandidate.put(election.candidate(), election.token());
            if (last != null && last >= election.token()) {
                violations.add(
                        "token regression: "
                                + election.candidate()
                                + " elected with "
                                + election.token()
                                + " after "
                                + last);
            }
        }
        // Terms whose very first write was refused although no greater term had been elected:
        // fenced out by a late acquire of their own instance (an informational count).
        long zombies = 0;
        for (Election election : elections) {
            Write first =
                    writes.stream()
                            .filter(
                                    w ->
                                            w.candidate().equals(election.candidate())
                                                    && w.token() == election.token())
                            .min(Comparator.comparingLong(Write::start))
                            .orElse(null);
            if (first != null
                    && first.outcome() == Outcome.REJECTED
                    && elections.stream()
                            .noneMatch(
                                    o ->
                                            o.token() > election.token()
                                                    && o.at() - first.start() < 0)) {
                zombies++;
            }
        }
        Figures.count("terms fenced out at birth by their own instance's late acquire", zombies);
        long rejected = writes.stream().filter(w -> w.outcome() == Outcome.REJECTED).count();
        long errors = writes.stream().filter(w -> w.outcome() == Outcome.ERROR).count();
        Report report =
                new Report(
                        List.copyOf(violations),
                        log == null ? -1 : log.size(),
                        applied.size(),
                        rejected,
                        errors,
                        elections.size());
        Figures.count("checker: runs", 1);
        Figures.count("checker: elections checked", elections.size());
        Figures.count("checker: writes checked", writes.size());
        Figures.count("checker: applied writes", applied.size());
        Figures.count("checker: rejected writes", rejected);
        return report;
    }

    private static String key(String candidate, long token, long seq) {
        return candidate + "/" + token + "/" + seq;
    }
}
