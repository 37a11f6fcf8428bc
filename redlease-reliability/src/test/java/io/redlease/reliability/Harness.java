package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.ElectorConfig;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One scenario's world: a unique, hash-tagged election name, the history, the fenced log, the
 * candidates (each behind its own proxy when the target is a plain host and port), and the checks.
 * Closing it stops every elector, proxy, child JVM and connection it made, in reverse order.
 */
final class Harness implements AutoCloseable {

    private static final AtomicLong NAMES = new AtomicLong();

    /**
     * A margin for thread scheduling on a loaded two-core machine, times {@code
     * -Dredlease.test.timeScale}.
     */
    static final Duration SLACK = scaled(Duration.ofMillis(400));

    final String name;

    final History history = new History();

    final FencedLog log;

    final Connections connections = new Connections();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    private final List<Candidate> candidates = new ArrayList<>();

    private final List<ChildCandidate> children = new ArrayList<>();

    private @Nullable String host;

    private int port;

    private @Nullable Supplier<StringRedisTemplate> templates;

    private StringRedisTemplate control;

    Duration ttl = Duration.ofMillis(500);

    /** Whether candidates connect straight to Redis instead of through their own proxy. */
    boolean direct;

    /**
     * Whether in-process candidates on a host and port use a Jedis connection factory instead of
     * Lettuce; {@code -Dredlease.test.client=jedis} makes it the default.
     */
    boolean jedis = "jedis".equals(System.getProperty("redlease.test.client"));

    Duration renewInterval = Duration.ofMillis(100);

    Duration acquireInterval = Duration.ofMillis(100);

    /** A harness whose candidates reach {@code host:port} each through their own proxy. */
    Harness(TestInfo info, String host, int port) {
        this(info);
        this.host = host;
        this.port = port;
        this.control = connections.standalone(host, port);
    }

    /** A harness whose candidates use templates from the supplier (Sentinel, Cluster, TLS...). */
    Harness(TestInfo info, Supplier<StringRedisTemplate> templates) {
        this(info);
        this.templates = templates;
        this.control = templates.get();
    }

    /** Like {@link #Harness(TestInfo, Supplier)} with a separate (administrative) control. */
    Harness(TestInfo info, Supplier<StringRedisTemplate> templates, StringRedisTemplate control) {
        this(info);
        this.templates = templates;
        this.control = control;
    }

    /** Describes an error with the messages of its whole cause chain. */
    static String describe(Throwable error) {
        StringBuilder text = new StringBuilder(error.toString());
        for (Throwable cause = error.getCause();
                cause != null && cause != cause.getCause();
                cause = cause.getCause()) {
            text.append(" <- ").append(cause);
        }
        return text.toString();
    }

    private Harness(TestInfo info) {
        String method = info.getTestMethod().map(m -> m.getName()).orElse("test");
        this.name =
                "{rel-" + method + "-" + System.nanoTime() + "-" + NAMES.incrementAndGet() + "}";
        this.log = new FencedLog(name);
    }

    Harness timings(Duration ttl, Duration renew, Duration acquire) {
        this.ttl = ttl;
        this.renewInterval = renew;
        this.acquireInterval = acquire;
        return this;
    }

    String host() {
        return java.util.Objects.requireNonNull(host);
    }

    int port() {
        return port;
    }

    StringRedisTemplate control() {
        return control;
    }

    ElectorConfig.Builder config() {
        return ElectorConfig.builder(name)
                .ttl(ttl)
                .renewInterval(renewInterval)
                .acquireInterval(acquireInterval);
    }

    Candidate candidate(String id, Workload workload) {
        return candidate(id, workload, b -> {});
    }

    /** Creates and starts a candidate. */
    Candidate candidate(String id, Workload workload, Consumer<ElectorConfig.Builder> tweak) {
        Candidate candidate = unstarted(id, workload, tweak);
        candidate.start();
        return candidate;
    }

    /** Creates a candidate without starting it. */
    Candidate unstarted(String id, Workload workload, Consumer<ElectorConfig.Builder> tweak) {
        TcpProxy proxy = null;
        StringRedisTemplate redis;
        if (templates != null) {
            redis = templates.get();
        } else if (direct) {
            redis = jedis ? connections.jedis(host, port) : connections.standalone(host, port);
        } else {
            proxy = TcpProxy.start(host, port);
            closeables.add(proxy);
            redis =
                    jedis
                            ? connections.jedis(proxy.host(), proxy.port())
                            : connections.standalone(proxy.host(), proxy.port());
        }
        ElectorConfig.Builder config = config();
        tweak.accept(config);
        Candidate candidate = new Candidate(id, redis, proxy, config, history, log, workload);
        closeables.add(candidate);
        candidates.add(candidate);
        return candidate;
    }

    /** Starts a candidate in a child JVM (for process faults). */
    ChildCandidate child(String id, boolean fenced) {
        ChildCandidate child =
                ChildCandidate.start(
                        id, host, port, name, ttl, renewInterval, acquireInterval, fenced, history);
        closeables.add(child);
        children.add(child);
        return child;
    }

    void closeLater(AutoCloseable closeable) {
        closeables.add(closeable);
    }

    List<Candidate> candidates() {
        return List.copyOf(candidates);
    }

    /** Returns the id of a candidate that believes it leads right now, if any. */
    Optional<String> leader() {
        for (Candidate candidate : candidates) {
            if (candidate.isLeader()) {
                return Optional.of(candidate.id);
            }
        }
        for (ChildCandidate child : children) {
            if (child.isLeader()) {
                return Optional.of(child.id);
            }
        }
        return Optional.empty();
    }

    Candidate awaitLeaderCandidate(Duration atMost) {
        Awaitility.await()
                .atMost(scaled(atMost))
                .pollInterval(Duration.ofMillis(2))
                .until(() -> candidates.stream().anyMatch(Candidate::isLeader));
        return candidates.stream().filter(Candidate::isLeader).findFirst().orElseThrow();
    }

    /** Waits until the candidate leads and returns it. */
    static Candidate awaitLeading(Candidate candidate, Duration atMost) {
        Awaitility.await()
                .atMost(scaled(atMost))
                .pollInterval(Duration.ofMillis(2))
                .until(() -> candidate.isLeader() && candidate.recordedCurrentTerm());
        return candidate;
    }

    /** Returns the other candidate of a pair. */
    Candidate other(Candidate one) {
        return candidates.stream().filter(c -> c != one).findFirst().orElseThrow();
    }

    /**
     * Waits until some candidate leads and has {@code n} applied writes in its current term;
     * returns it.
     */
    Candidate awaitWritingLeader(int n) {
        Candidate[] found = new Candidate[1];
        Awaitility.await()
                .atMost(scaled(Duration.ofSeconds(10)))
                .pollInterval(Duration.ofMillis(2))
                .until(
                        () -> {
                            for (Candidate c : candidates) {
                                java.util.OptionalLong token = c.elector.token();
                                if (token.isPresent()
                                        && history.writes(c.id).stream()
                                                        .filter(
                                                                w ->
                                                                        w.token()
                                                                                        == token
                                                                                                .getAsLong()
                                                                                && w.outcome()
                                                                                        == History
                                                                                                .Outcome
                                                                                                .APPLIED)
                                                        .count()
                                                >= n) {
                                    found[0] = c;
                                    return true;
                                }
                            }
                            return false;
                        });
        return found[0];
    }

    /**
     * Waits until the condition holds; on timeout fails with {@code what} and the history, so a
     * failure on a loaded machine can be told from a bug.
     */
    void await(String what, Duration atMost, java.util.concurrent.Callable<Boolean> condition) {
        try {
            Awaitility.await()
                    .atMost(scaled(atMost))
                    .pollInterval(Duration.ofMillis(2))
                    .until(condition);
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            throw new AssertionError(
                    "not within "
                            + Figures.ms(scaled(atMost))
                            + ": "
                            + what
                            + "; "
                            + history.summary(),
                    ex);
        }
    }

    /** Waits until {@code candidate} has at least {@code n} applied writes in the history. */
    void awaitApplied(String candidate, int n) {
        try {
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(10)))
                    .pollInterval(Duration.ofMillis(2))
                    .until(
                            () ->
                                    history.writes(candidate).stream()
                                                    .filter(
                                                            w ->
                                                                    w.outcome()
                                                                            == History.Outcome
                                                                                    .APPLIED)
                                                    .count()
                                            >= n);
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            throw new AssertionError(
                    candidate + " did not get " + n + " writes applied; " + history.summary(), ex);
        }
    }

    /**
     * The liveness check after a healed fault: a leader exists within TTL + acquire interval (plus
     * scheduling slack) of {@code healedAt}, the same one leads for the next {@code stable} window,
     * and it gets a write applied. Records the time to a leader as a figure.
     *
     * <p>One flap is tolerated, and counted, only when that leader ended its term by its own
     * deadline ({@code EXPIRED}: its renewals did not get through in time on this loaded machine);
     * a term that ends {@code LOST} (its lease taken or its token superseded) always fails.
     *
     * @return the time from the heal to a leader
     */
    Duration assertLeaderBackAfterHeal(String fault, long healedAt, Duration stable) {
        return assertLeaderBackAfterHeal(fault, healedAt, stable, true);
    }

    /**
     * Like {@link #assertLeaderBackAfterHeal(String, long, Duration)}; {@code toleratedFlap} false
     * fails on any first leader that does not stay.
     */
    Duration assertLeaderBackAfterHeal(
            String fault, long healedAt, Duration stable, boolean toleratedFlap) {
        Duration bound = ttl.plus(acquireInterval).plus(SLACK);
        String leader = awaitAnyLeader(fault, healedAt + bound.toNanos(), bound);
        long seen = System.nanoTime();
        Duration back = Duration.ofNanos(Math.max(0, seen - healedAt));
        Figures.duration("leader back after heal (" + fault + ")", back.toNanos());
        Figures.duration("leader back after heal (all faults)", back.toNanos());
        if (!stays(leader, stable)) {
            String reason = stepDownReasonAfter(leader, seen);
            if (!toleratedFlap || !"EXPIRED".equals(reason)) {
                throw new AssertionError(
                        "the leader after "
                                + fault
                                + " did not stay (it stepped down "
                                + reason
                                + "); "
                                + history.summary());
            }
            Figures.count("post-heal flaps by the leader's own deadline (load)", 1);
            long again = System.nanoTime();
            leader = awaitAnyLeader(fault, again + bound.toNanos(), bound);
            if (!stays(leader, stable)) {
                throw new AssertionError(
                        "the leader after " + fault + " did not stay twice; " + history.summary());
            }
        }
        String first = leader;
        long after = System.nanoTime();
        if (candidates.stream().anyMatch(c -> c.id.equals(first))) {
            await(
                    first + " gets a write applied after " + fault,
                    Duration.ofSeconds(5),
                    () ->
                            history.writes(first).stream()
                                    .anyMatch(
                                            w ->
                                                    w.outcome() == History.Outcome.APPLIED
                                                            && w.start() - after > 0));
        }
        return back;
    }

    /**
     * The liveness check of the fault mix, where the heal of one fault may still end a term that
     * was doomed during it (a late renewal after a partition, a leader whose lease was cut): some
     * leader must be in place within TTL + acquire interval (plus slack) of {@code healedAt} and
     * stay for {@code stable}. Leaders that drop before that are allowed while the bound lasts; one
     * drop by the leader's own deadline ({@code EXPIRED}, load) extends the bound once.
     *
     * @return the time from the heal until the leader that stayed was first seen
     */
    Duration assertStableLeaderWithin(String fault, long healedAt, Duration stable) {
        Duration bound = ttl.plus(acquireInterval).plus(SLACK);
        long deadline = healedAt + bound.toNanos();
        boolean extended = false;
        while (true) {
            String leader = leader().orElse(null);
            long seen = System.nanoTime();
            if (leader != null) {
                if (stays(leader, stable)) {
                    Duration back = Duration.ofNanos(Math.max(0, seen - healedAt));
                    Figures.duration("leader back after heal (" + fault + ")", back.toNanos());
                    Figures.duration("leader back after heal (all faults)", back.toNanos());
                    return back;
                }
                if (!extended && "EXPIRED".equals(stepDownReasonAfter(leader, seen))) {
                    extended = true;
                    deadline = System.nanoTime() + bound.toNanos();
                    Figures.count("post-heal flaps by the leader's own deadline (load)", 1);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(
                        "no leader that stays "
                                + Figures.ms(stable)
                                + " within "
                                + Figures.ms(bound)
                                + " of healing "
                                + fault
                                + "; "
                                + history.summary());
            }
            Thread.onSpinWait();
        }
    }

    /** Waits (bounded) for the leader's step-down after {@code since}; returns its reason. */
    private String stepDownReasonAfter(String leader, long since) {
        try {
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(3)))
                    .pollInterval(Duration.ofMillis(2))
                    .until(
                            () ->
                                    history.stepDowns(leader).stream()
                                            .anyMatch(d -> d.at() - since > 0));
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            return "(no step-down recorded: another candidate took over)";
        }
        return history.stepDowns(leader).stream()
                .filter(d -> d.at() - since > 0)
                .findFirst()
                .orElseThrow()
                .reason();
    }

    private String awaitAnyLeader(String fault, long deadline, Duration bound) {
        while (true) {
            String leader = leader().orElse(null);
            if (leader != null) {
                return leader;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(
                        "no leader within "
                                + Figures.ms(bound)
                                + " of healing "
                                + fault
                                + "; history failures: "
                                + tail(history.failures()));
            }
            Thread.onSpinWait();
        }
    }

    /** Returns "id/token" of the leader right now (one term), or null. */
    private @Nullable String leaderTerm() {
        for (Candidate candidate : candidates) {
            java.util.OptionalLong token = candidate.elector.token();
            if (token.isPresent()) {
                return candidate.id + "/" + token.getAsLong();
            }
        }
        for (ChildCandidate child : children) {
            if (child.isLeader()) {
                return child.id;
            }
        }
        return null;
    }

    /** Whether the leader keeps leading, in the same term, for {@code stable}. */
    private boolean stays(String leader, Duration stable) {
        String term = leaderTerm();
        if (term == null || !(term.equals(leader) || term.startsWith(leader + "/"))) {
            return false;
        }
        long end = System.nanoTime() + stable.toNanos();
        while (System.nanoTime() - end < 0) {
            if (!term.equals(leaderTerm())) {
                return false;
            }
            try {
                Thread.sleep(2); // polling interval of a bounded check, not a synchronisation
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private static <T> String tail(List<T> list) {
        return list.subList(Math.max(0, list.size() - 5), list.size()).toString();
    }

    /** When the first fault whose description starts with {@code what} began. */
    long faultStart(String what) {
        return history.faults().stream()
                .filter(f -> f.what().startsWith(what))
                .mapToLong(History.Fault::start)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no fault " + what));
    }

    /** Records a fault injected (and healed) for the figures and the history. */
    void fault(String what, long start, long healed) {
        history.fault(what, start, healed);
        Figures.count("faults injected: " + what, 1);
        Figures.count("faults injected (all)", 1);
    }

    /** Stops every candidate (gracefully) and kills every child, so the history is final. */
    void stopAll() {
        for (Candidate candidate : candidates) {
            candidate.close();
        }
        for (ChildCandidate child : children) {
            child.close();
        }
    }

    Checker.Report check() {
        return check(true);
    }

    Checker.Report check(boolean logComplete) {
        stopAll();
        List<FencedLog.Entry> entries = log.read(control);
        checkedLog = entries;
        checkedLogComplete = logComplete;
        return Checker.check(history, entries, logComplete);
    }

    /** The log read by the last {@link #check(boolean)}. */
    private List<FencedLog.Entry> checkedLog = List.of();

    private boolean checkedLogComplete;

    /** Asserts the run is safe: no violation at all. */
    static void assertSafe(Checker.Report report) {
        System.out.println("[redlease-reliability] " + report);
        Figures.count("violations outside the documented boundary", report.violations().size());
        assertThat(report.violations()).as("fencing violations").isEmpty();
    }

    /**
     * Asserts the checker caught what a mutant or a documented boundary causes, and nothing else:
     * the rules broken are exactly {@code expected}; every violation is of a write still in flight
     * or sent at or after {@code faultAt}, or of a term elected after it; and the history that was
     * over before {@code faultAt} (with the part of the log it wrote) is clean on its own.
     */
    void assertCaught(
            Checker.Report report, String boundary, long faultAt, Checker.Kind... expected) {
        assertWithinBoundary(report, boundary, faultAt, java.util.Set.of(expected));
        assertThat(report.kinds())
                .as("the rules broken by " + boundary + ": " + report)
                .containsExactlyInAnyOrder(expected);
    }

    /**
     * Asserts that whatever the checker found is explained by a documented boundary: only rules in
     * {@code allowed} are broken; every violation is of a write still in flight or sent at or after
     * {@code faultAt}, or of a term elected after it; and the history that was over before {@code
     * faultAt} (with the part of the log it wrote) is clean on its own. Violations are counted as
     * caught inside the boundary.
     */
    void assertWithinBoundary(
            Checker.Report report,
            String boundary,
            long faultAt,
            java.util.Set<Checker.Kind> allowed) {
        System.out.println("[redlease-reliability] " + boundary + ": " + report);
        if (!report.violations().isEmpty()) {
            Figures.count(
                    "violations caught inside the documented boundary: " + boundary,
                    report.violations().size());
        }
        assertThat(report.kinds())
                .as("the rules broken by " + boundary + ": " + report)
                .isSubsetOf(allowed);
        assertThat(report.violations())
                .as("violations of " + boundary + " all come after the fault; " + history.summary())
                .allMatch(v -> v.at() != Long.MIN_VALUE && v.at() - faultAt >= 0);
        History prefix = history.before(faultAt);
        java.util.Set<String> written = new java.util.HashSet<>();
        prefix.writes().forEach(w -> written.add(w.candidate() + "/" + w.token() + "/" + w.seq()));
        List<FencedLog.Entry> logBefore =
                checkedLog.stream()
                        .filter(
                                e ->
                                        written.contains(
                                                e.candidate() + "/" + e.token() + "/" + e.seq()))
                        .toList();
        Checker.Report before = Checker.evaluate(prefix, logBefore, checkedLogComplete);
        assertThat(before.violations())
                .as("the history before " + boundary + " (" + before + ")")
                .isEmpty();
        assertThat(prefix.elections()).as("terms before " + boundary).isNotEmpty();
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception ex) {
                if (ex instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (failure == null) {
                    failure = new IllegalStateException("closing " + closeables.get(i), ex);
                }
            }
        }
        connections.close();
        if (failure != null) {
            throw failure;
        }
    }
}
