package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.reliability.Checker.Kind;
import io.redlease.reliability.Checker.Report;
import io.redlease.reliability.History.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checker on hand-built histories, without Redis: one history per rule that breaks exactly that
 * rule, and a clean one that breaks none, so a rule that stopped firing (or fired on a clean run)
 * would be seen here rather than hidden behind a scenario that breaks several at once.
 *
 * <p>Times are nanoseconds on an arbitrary clock. The clean run: {@code a} is elected with token 1
 * at 10 and writes twice; {@code b} is elected with 2 at 100, {@code a}'s next write is refused,
 * {@code b} writes.
 */
class CheckerTests {

    private final History history = new History();

    private final List<FencedLog.Entry> log = new ArrayList<>();

    /** Records a write and, when {@code logged}, appends it to the log with counter {@code c}. */
    private void write(
            String candidate, long token, long seq, long start, long end, Outcome outcome) {
        history.write(new History.Write(candidate, token, seq, start, end, outcome, ""));
    }

    private void logged(String candidate, long token, long seq, long counter) {
        log.add(new FencedLog.Entry(token, seq, counter, candidate, log.size()));
    }

    /** The clean run's first term: a elected 1 at 10, writes 1 and 2 applied. */
    private void firstTerm() {
        history.elected("a", 1, 10);
        write("a", 1, 1, 20, 30, Outcome.APPLIED);
        logged("a", 1, 1, 1);
        write("a", 1, 2, 40, 50, Outcome.APPLIED);
        logged("a", 1, 2, 1);
    }

    private Report check() {
        return Checker.evaluate(history, log, true);
    }

    @Test
    void cleanHistoryBreaksNoRule() {
        firstTerm();
        history.elected("b", 2, 100);
        write("a", 1, 3, 110, 120, Outcome.REJECTED);
        write("b", 2, 1, 130, 140, Outcome.APPLIED);
        logged("b", 2, 1, 2);
        // A write that failed (timeout) and did land counts as applied, in order.
        write("b", 2, 2, 150, 160, Outcome.ERROR);
        logged("b", 2, 2, 2);
        history.elected("a", 3, 200);
        write("a", 3, 4, 210, 220, Outcome.APPLIED);
        logged("a", 3, 4, 3);

        Report report = check();

        assertThat(report.violations()).isEmpty();
        assertThat(report.ok()).isTrue();
        assertThat(report.applied()).isEqualTo(5);
        assertThat(report.rejected()).isEqualTo(1);
        assertThat(report.errors()).isEqualTo(1);
        assertThat(report.elections()).isEqualTo(3);
        assertThat(report.logEntries()).isEqualTo(5);
    }

    @Test
    void tokenAppliedAfterAGreaterOneInTheLogBreaksLogOrderOnly() {
        firstTerm();
        history.elected("b", 2, 100);
        // a's write was sent before b's election and overlaps b's write in time, but Redis
        // applied it after b's: only the log shows the order.
        write("a", 1, 3, 90, 200, Outcome.APPLIED);
        write("b", 2, 1, 110, 150, Outcome.APPLIED);
        logged("b", 2, 1, 2);
        logged("a", 1, 3, 1);

        Report report = check();

        assertOnly(report, Kind.LOG_ORDER, 1, 200);
    }

    @Test
    void writeAppliedWhenTheCounterWasAboveItsTokenBreaksNewerTermOnly() {
        firstTerm();
        // Term 2 was minted at Redis before a's write (the write read counter 2) but reported
        // only at 100, after the write was sent; nobody wrote with 2 before it.
        write("a", 1, 3, 90, 95, Outcome.APPLIED);
        logged("a", 1, 3, 2);
        history.elected("b", 2, 100);
        write("b", 2, 1, 110, 150, Outcome.APPLIED);
        logged("b", 2, 1, 2);

        Report report = check();

        assertOnly(report, Kind.NEWER_TERM, 1, 95);
    }

    @Test
    void writeSentAfterAGreaterTermWasReportedBreaksStaleWriteOnly() {
        firstTerm();
        history.elected("b", 2, 100);
        // Sent at 105, after term 2 was reported elected at 100, and still applied (before any
        // of b's writes, with the counter at 1): what a broken fence would let through.
        write("a", 1, 3, 105, 200, Outcome.APPLIED);
        logged("a", 1, 3, 1);
        write("b", 2, 1, 110, 150, Outcome.APPLIED);
        logged("b", 2, 1, 2);

        Report report = check();

        assertOnly(report, Kind.STALE_WRITE, 1, 200);
    }

    @Test
    void writeBelowTheTokenOfACompletedWriteBreaksRealTimeOrderOnly() {
        firstTerm();
        // The log was lost (a restart without persistence) and b's election was never
        // reported (its JVM died): only the clients' verdicts and times are left.
        write("b", 2, 1, 110, 120, Outcome.APPLIED);
        write("a", 1, 3, 130, 140, Outcome.APPLIED);

        Report report = Checker.evaluate(history, null, false);

        assertOnly(report, Kind.REAL_TIME_ORDER, 1, 140);
        assertThat(report.logEntries()).isEqualTo(-1);
    }

    @Test
    void tokenElectedTwiceBreaksDuplicateTokenOnly() {
        firstTerm();
        history.elected("b", 1, 100);

        Report report = check();

        assertOnly(report, Kind.DUPLICATE_TOKEN, 1, 100);
        assertThat(report.violations().get(0).message())
                .isEqualTo("duplicate token 1: elected by a and again by b");
    }

    @Test
    void candidateElectedBelowItsPreviousTokenBreaksTokenRegressionOnly() {
        history.elected("a", 5, 10);
        history.elected("b", 6, 50);
        history.elected("a", 4, 100);

        Report report = check();

        assertOnly(report, Kind.TOKEN_REGRESSION, 4, 100);
    }

    @Test
    void writeReportedAppliedButMissingFromTheLogBreaksLostWriteOnly() {
        firstTerm();
        write("a", 1, 3, 60, 70, Outcome.APPLIED);

        Report report = check();

        assertOnly(report, Kind.LOST_WRITE, 1, 70);
    }

    @Test
    void writeReportedRefusedButPresentInTheLogBreaksPhantomWriteOnly() {
        firstTerm();
        write("a", 1, 3, 60, 70, Outcome.REJECTED);
        logged("a", 1, 3, 1);

        Report report = check();

        assertOnly(report, Kind.PHANTOM_WRITE, 1, 70);
    }

    @Test
    void lostAndPhantomWritesAreNotJudgedWhenTheLogMayBeIncomplete() {
        firstTerm();
        write("a", 1, 3, 60, 70, Outcome.APPLIED);
        write("a", 1, 4, 80, 90, Outcome.REJECTED);
        logged("a", 1, 4, 1);

        assertThat(Checker.evaluate(history, log, false).violations()).isEmpty();
        assertThat(Checker.evaluate(history, log, true).kinds())
                .containsExactlyInAnyOrder(Kind.LOST_WRITE, Kind.PHANTOM_WRITE);
    }

    @Test
    void aLoggedWriteTheHistoryDoesNotKnowIsDatedUnknown() {
        firstTerm();
        history.elected("b", 2, 100);
        write("b", 2, 1, 110, 150, Outcome.APPLIED);
        logged("b", 2, 1, 2);
        logged("z", 1, 9, 1);

        Report report = check();

        assertOnly(report, Kind.LOG_ORDER, 1, Long.MIN_VALUE);
    }

    @Test
    void theHistoryBeforeATimeKeepsOnlyWhatWasOverByThen() {
        firstTerm();
        history.elected("b", 2, 100);
        write("a", 1, 3, 90, 200, Outcome.APPLIED);

        History before = history.before(100);

        assertThat(before.elections()).extracting(History.Election::token).containsExactly(1L);
        assertThat(before.writes()).extracting(History.Write::seq).containsExactly(1L, 2L);
    }

    private static void assertOnly(Report report, Kind kind, long token, long at) {
        assertThat(report.violations())
                .as(report.toString())
                .singleElement()
                .satisfies(
                        v -> {
                            assertThat(v.kind()).isEqualTo(kind);
                            assertThat(v.token()).isEqualTo(token);
                            assertThat(v.at()).isEqualTo(at);
                            assertThat(v.message()).startsWith(kind.label);
                        });
    }
}
