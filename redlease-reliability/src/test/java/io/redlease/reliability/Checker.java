package io.redlease.reliability;

import io.redlease.reliability.History.Election;
import io.redlease.reliability.History.Outcome;
import io.redlease.reliability.History.Write;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
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

    /** The rule a violation breaks, one per item of the list above. */
    enum Kind {
        /** Rule 1: a token applied after a greater one, in the log's order. */
        LOG_ORDER("log order"),
        /** Rule 2: a write applied when the counter (read in its script) was above its token. */
        NEWER_TERM("newer term"),
        /** Rule 3: an applied write sent after a greater term had been reported elected. */
        STALE_WRITE("stale write"),
        /** Rule 4: an applied write below the token of a write that had completed before it. */
        REAL_TIME_ORDER("real-time order"),
        /** Rule 5: one token elected twice. */
        DUPLICATE_TOKEN("duplicate token"),
        /** Rule 5: a candidate elected with a token not above its previous one. */
        TOKEN_REGRESSION("token regression"),
        /** Rule 6: reported applied, missing from the log. */
        LOST_WRITE("lost write"),
        /** Rule 6: reported refused, present in the log. */
        PHANTOM_WRITE("phantom write");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /**
     * One violation.
     *
     * @param kind the rule it breaks
     * @param token the token of the offending write or election
     * @param at when the offending event was over ({@link System#nanoTime()}): the write completed
     *     or the term was reported elected; {@link Long#MIN_VALUE} when the log holds a write the
     *     history does not know
     * @param message what happened, for people
     */
    record Violation(Kind kind, long token, long at, String message) {

        @Override
        public String toString() {
            return message;
        }
    }

    /** The outcome of a check. */
    record Report(
            List<Violation> violations,
            int logEntries,
            long applied,
            long rejected,
            long errors,
            int elections) {

        boolean ok() {
            return violations.isEmpty();
        }

        /** The rules broken, each once. */
        Set<Kind> kinds() {
            Set<Kind> kinds = EnumSet.noneOf(Kind.class);
            violations.forEach(v -> kinds.add(v.kind()));
            return kinds;
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
        Report report = evaluate(history, log, logComplete);
        List<Write> writes = history.writes();
        List<Election> elections = history.elections();
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
        Figures.count("checker: runs", 1);
        Figures.count("checker: elections checked", elections.size());
        Figures.count("checker: writes checked", writes.size());
        Figures.count("checker: applied writes", report.applied());
        Figures.count("checker: rejected writes", report.rejected());
        return report;
    }

    /** Like {@link #check}, without recording figures (for checks of checks and of prefixes). */
    static Report evaluate(
            History history, @Nullable List<FencedLog.Entry> log, boolean logComplete) {
        List<Violation> violations = new ArrayList<>();
        List<Write> writes = history.writes();
        List<Election> elections = history.elections();
        Map<String, Long> completed = new HashMap<>();
        for (Write write : writes) {
            completed.putIfAbsent(key(write.candidate(), write.token(), write.seq()), write.end());
        }

        // Which writes were applied: the log says so when we have it; else the client's verdict.
        Set<String> inLog = new HashSet<>();
        if (log != null) {
            long previous = Long.MIN_VALUE;
            for (FencedLog.Entry entry : log) {
                String entryKey = key(entry.candidate(), entry.token(), entry.seq());
                inLog.add(entryKey);
                long at = completed.getOrDefault(entryKey, Long.MIN_VALUE);
                if (entry.token() < previous) {
                    violations.add(
                            violation(
                                    Kind.LOG_ORDER,
                                    entry.token(),
                                    at,
                                    "log order: token "
                                            + entry.token()
                                            + " (seq "
                                            + entry.seq()
                                            + " by "
                                            + entry.candidate()
                                            + ") applied after token "
                                            + previous));
                }
                previous = Math.max(previous, entry.token());
                if (entry.counter() > entry.token()) {
                    violations.add(
                            violation(
                                    Kind.NEWER_TERM,
                                    entry.token(),
                                    at,
                                    "newer term: token "
                                            + entry.token()
                                            + " (seq "
                                            + entry.seq()
                                            + " by "
                                            + entry.candidate()
                                            + ") applied when term "
                                            + entry.counter()
                                            + " had been elected"));
                }
            }
        }
        List<Write> applied = new ArrayList<>();
        for (Write write : writes) {
            boolean logged = inLog.contains(key(write.candidate(), write.token(), write.seq()));
            if (log != null && logComplete) {
                if (write.outcome() == Outcome.APPLIED && !logged) {
                    violations.add(
                            violation(
                                    Kind.LOST_WRITE,
                                    write.token(),
                                    write.end(),
                                    "lost write: "
                                            + write
                                            + " was reported applied but is not in the log"));
                }
                if (write.outcome() == Outcome.REJECTED && logged) {
                    violations.add(
                            violation(
                                    Kind.PHANTOM_WRITE,
                                    write.token(),
                                    write.end(),
                                    "phantom write: "
                                            + write
                                            + " was reported rejected but is in the log"));
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
                            violation(
                                    Kind.STALE_WRITE,
                                    write.token(),
                                    write.end(),
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
                                            + " was elected"));
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
                        violation(
                                Kind.REAL_TIME_ORDER,
                                write.token(),
                                write.end(),
                                "real-time order: token "
                                        + write.token()
                                        + " (seq "
                                        + write.seq()
                                        + " by "
                                        + write.candidate()
                                        + ") applied after a write with token "
                                        + maxTokenEnded
                                        + " had completed"));
            }
        }

        // Unique tokens; increasing per candidate.
        Map<Long, Election> seen = new HashMap<>();
        Map<String, Long> lastByCandidate = new HashMap<>();
        for (Election election : byTime) {
            Election earlier = seen.putIfAbsent(election.token(), election);
            if (earlier != null) {
                violations.add(
                        violation(
                                Kind.DUPLICATE_TOKEN,
                                election.token(),
                                election.at(),
                                "duplicate token "
                                        + election.token()
                                        + ": elected by "
                                        + earlier.candidate()
                                        + " and again by "
                                        + election.candidate()));
            }
            Long last = lastByCandidate.put(election.candidate(), election.token());
            if (last != null && last >= election.token()) {
                violations.add(
                        violation(
                                Kind.TOKEN_REGRESSION,
                                election.token(),
                                election.at(),
                                "token regression: "
                                        + election.candidate()
                                        + " elected with "
                                        + election.token()
                                        + " after "
                                        + last));
            }
        }
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
        return report;
    }

    private static Violation violation(Kind kind, long token, long at, String message) {
        return new Violation(kind, token, at, message);
    }

    private static String key(String candidate, long token, long seq) {
        return candidate + "/" + token + "/" + seq;
    }
}
