package io.redlease.jdbc;

import static io.redlease.jdbc.Fixture.inTerm;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.redlease.core.Term;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link TransactionFencing} against real PostgreSQL, real MariaDB and embedded H2, with real terms
 * of an elector on a real Redis.
 */
class TransactionFencingTests {

    @ParameterizedTest
    @EnumSource(Database.class)
    void fencedTransactionOverTwoTablesCommitsAndStampsItsToken(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        f.writeOrder("o-1", term.token());
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("o-1");
            assertThat(f.ledgerIds()).containsExactly("o-1");
            assertThat(f.fenceToken()).isEqualTo(term.token());
            assertThat(f.stamps()).isEqualTo(1);
            assertThat(f.outcomes)
                    .containsExactly("committed " + f.leadership.name() + " " + term.token());
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void newerTokenInTheTableRefusesTheTransactionAndRollsBackEveryTable(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term older = f.leadership.lead();
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Object> stale =
                    Fixture.laterInTerm(
                            older,
                            go,
                            () ->
                                    f.tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                f.writeOrder("stale", older.token());
                                                return null;
                                            }));
            Term newer = f.leadership.next(older);
            inTerm(newer, () -> f.tx.execute(status -> stampOnly(f)));
            Logger logger = (Logger) LoggerFactory.getLogger("io.redlease.jdbc");
            ListAppender<ILoggingEvent> log = new ListAppender<>();
            log.start();
            Level level = logger.getLevel();
            logger.setLevel(Level.DEBUG);
            logger.addAppender(log);
            go.countDown();
            assertThatExceptionOfType(ExecutionException.class)
                    .isThrownBy(() -> stale.get(20, TimeUnit.SECONDS))
                    .havingCause()
                    .isInstanceOfSatisfying(
                            FencedOutException.class,
                            ex -> {
                                assertThat(ex.token()).isEqualTo(older.token());
                                assertThat(ex.newerToken()).isEqualTo(newer.token());
                                assertThat(ex.electionName()).isEqualTo(f.leadership.name());
                            })
                    .withMessageContaining("token is " + older.token())
                    .withMessageContaining("newer token " + newer.token());
            logger.detachAppender(log);
            logger.setLevel(level);
            assertThat(log.list)
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .containsExactly(
                            "redlease: refused a fenced transaction of election '"
                                    + f.leadership.name()
                                    + "': token "
                                    + older.token()
                                    + " is older than "
                                    + newer.token()
                                    + " in "
                                    + f.fence.name());
            assertThat(log.list).extracting(ILoggingEvent::getLevel).containsExactly(Level.DEBUG);
            assertThat(f.orderIds()).isEmpty();
            assertThat(f.ledgerIds()).isEmpty();
            assertThat(f.fenceToken()).isEqualTo(newer.token());
            assertThat(f.stamps()).isEqualTo(1);
            assertThat(f.outcomes)
                    .contains(
                            "refused "
                                    + f.leadership.name()
                                    + " "
                                    + older.token()
                                    + " "
                                    + newer.token());
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void olderTermThatStampedFirstCommitsBeforeTheNewerOne(Database database) throws Exception {
        try (Fixture f = new Fixture(database)) {
            Term older = f.leadership.lead();
            List<Long> commits = new CopyOnWriteArrayList<>();
            CountDownLatch olderStamped = new CountDownLatch(1);
            CountDownLatch releaseOlder = new CountDownLatch(1);
            CompletableFuture<Object> olderTx =
                    Fixture.laterInTerm(
                            older,
                            new CountDownLatch(0),
                            () ->
                                    f.tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                f.writeOrder("older", older.token());
                                                holdAfterStamp(
                                                        f,
                                                        olderStamped,
                                                        releaseOlder,
                                                        commits,
                                                        older.token());
                                                return null;
                                            }));
            assertThat(olderStamped.await(20, TimeUnit.SECONDS)).isTrue();
            Term newer = f.leadership.next(older);
            AtomicLong stampsSeenByNewer = new AtomicLong();
            CompletableFuture<Void> newerTx =
                    CompletableFuture.runAsync(
                            () ->
                                    inTerm(
                                            newer,
                                            () ->
                                                    f.tx.execute(
                                                            status -> {
                                                                f.fencing.fence();
                                                                f.writeOrder(
                                                                        "newer", newer.token());
                                                                recordCommit(
                                                                        commits, newer.token());
                                                                readStampsAfterStamp(
                                                                        f, stampsSeenByNewer);
                                                                return null;
                                                            })));
            // The newer transaction reaches its stamp and waits for the older one's row lock.
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> database.lockWaits(f.dataSource, f.fence.name()) == 1);
            assertThat(newerTx).isNotDone();
            assertThat(commits).isEmpty();
            releaseOlder.countDown();
            olderTx.get(20, TimeUnit.SECONDS);
            newerTx.get(20, TimeUnit.SECONDS);
            // Both committed, the older first: the newer one's stamp, once the older one's lock
            // was free, applied to the row the older one had committed (its afterCommit callbacks
            // run on two threads, in either order).
            assertThat(commits).containsExactlyInAnyOrder(older.token(), newer.token());
            assertThat(stampsSeenByNewer).hasValue(2);
            assertThat(f.orderIds()).containsExactly("newer", "older");
            assertThat(f.fenceToken()).isEqualTo(newer.token());
            assertThat(f.stamps()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void olderTermWaitingOnTheNewerOnesLockIsRefusedOnceItCommits(Database database)
            throws Exception {
        try (Fixture f = new Fixture(database)) {
            Term older = f.leadership.lead();
            List<Long> commits = new CopyOnWriteArrayList<>();
            CountDownLatch olderMayBegin = new CountDownLatch(1);
            AtomicBoolean olderWrote = new AtomicBoolean();
            CompletableFuture<Object> olderTx =
                    Fixture.laterInTerm(
                            older,
                            olderMayBegin,
                            () ->
                                    f.tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                f.writeOrder("older", older.token());
                                                olderWrote.set(true);
                                                recordCommit(commits, older.token());
                                                return null;
                                            }));
            Term newer = f.leadership.next(older);
            CountDownLatch newerStamped = new CountDownLatch(1);
            CountDownLatch releaseNewer = new CountDownLatch(1);
            CompletableFuture<Void> newerTx =
                    CompletableFuture.runAsync(
                            () ->
                                    inTerm(
                                            newer,
                                            () ->
                                                    f.tx.execute(
                                                            status -> {
                                                                f.fencing.fence();
                                                                f.writeOrder(
                                                                        "newer", newer.token());
                                                                holdAfterStamp(
                                                                        f,
                                                                        newerStamped,
                                                                        releaseNewer,
                                                                        commits,
                                                                        newer.token());
                                                                return null;
                                                            })));
            assertThat(newerStamped.await(20, TimeUnit.SECONDS)).isTrue();
            olderMayBegin.countDown();
            // The older transaction wrote its rows and waits for the newer one's row lock.
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> database.lockWaits(f.dataSource, f.fence.name()) == 1);
            assertThat(olderWrote).isTrue();
            assertThat(olderTx).isNotDone();
            releaseNewer.countDown();
            newerTx.get(20, TimeUnit.SECONDS);
            assertThatExceptionOfType(ExecutionException.class)
                    .isThrownBy(() -> olderTx.get(20, TimeUnit.SECONDS))
                    .havingCause()
                    .isInstanceOf(FencedOutException.class)
                    .withMessageContaining("token is " + older.token())
                    .withMessageContaining("newer token " + newer.token());
            assertThat(commits).containsExactly(newer.token());
            assertThat(f.orderIds()).containsExactly("newer");
            assertThat(f.ledgerIds()).containsExactly("newer");
            assertThat(f.fenceToken()).isEqualTo(newer.token());
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void transactionsOfOneTermFenceTogetherAndAFencedCallJoinsTheOuterTransaction(
            Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        f.writeOrder("a", term.token());
                                        // a nested call joining the transaction fences it again
                                        f.tx.execute(
                                                inner -> {
                                                    f.fencing.fence();
                                                    f.writeOrder("b", term.token());
                                                    return null;
                                                });
                                        return null;
                                    }));
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        f.writeOrder("c", term.token());
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("a", "b", "c");
            assertThat(f.stamps()).isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void theFirstFencedTransactionOfAnElectionWithoutARowAddsIt(Database database) {
        try (Fixture f = new Fixture(database)) {
            f.jdbc.sql("DELETE FROM " + f.fence.name()).update();
            Term term = f.leadership.lead();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        f.writeOrder("first", term.token());
                                        return null;
                                    }));
            assertThat(f.fenceToken()).isEqualTo(term.token());
            assertThat(f.stamps()).isEqualTo(1);
            assertThat(f.orderIds()).containsExactly("first");
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void withoutATermTheTransactionFailsBeforeItsWorkRuns(Database database) {
        try (Fixture f = new Fixture(database)) {
            AtomicBoolean ran = new AtomicBoolean();
            assertThatExceptionOfType(UnfencedTransactionException.class)
                    .isThrownBy(
                            () ->
                                    f.tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                ran.set(true);
                                                return null;
                                            }))
                    .withMessageContaining(
                            "needs a leadership term of election '" + f.leadership.name() + "'")
                    .withMessageContaining("is not run");
            assertThat(ran).isFalse();
            assertThat(f.fenceToken()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void withoutATransactionOrWhenReadOnlyFencingFailsFast(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            assertThatExceptionOfType(UnfencedTransactionException.class)
                    .isThrownBy(
                            () ->
                                    inTerm(
                                            term,
                                            () -> {
                                                f.fencing.fence();
                                                return null;
                                            }))
                    .withMessageContaining("needs a transaction in progress");
            TransactionTemplate readOnly = new TransactionTemplate(f.transactionManager);
            readOnly.setReadOnly(true);
            assertThatExceptionOfType(UnfencedTransactionException.class)
                    .isThrownBy(
                            () ->
                                    inTerm(
                                            term,
                                            () ->
                                                    readOnly.execute(
                                                            status -> {
                                                                f.fencing.fence();
                                                                return null;
                                                            })))
                    .withMessageContaining("read-only");
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void globalListenerRollsBackATransactionWithoutATermBeforeItsWorkRuns(Database database) {
        try (Fixture f = new Fixture(database)) {
            f.transactionManager.addListener(new FencingTransactionListener(f.fencing, ""));
            AtomicBoolean ran = new AtomicBoolean();
            assertThatExceptionOfType(UnfencedTransactionException.class)
                    .isThrownBy(
                            () ->
                                    f.tx.execute(
                                            status -> {
                                                ran.set(true);
                                                return null;
                                            }));
            assertThat(ran).isFalse();
            assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
            assertThat(TransactionSynchronizationManager.isSynchronizationActive()).isFalse();
            // In a term, every transaction is fenced without calling fence().
            Term term = f.leadership.lead();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.writeOrder("global", term.token());
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("global");
            assertThat(f.fenceToken()).isEqualTo(term.token());
            // Read-only transactions are left alone.
            TransactionTemplate readOnly = new TransactionTemplate(f.transactionManager);
            readOnly.setReadOnly(true);
            List<String> read = readOnly.execute(status -> f.orderIds());
            assertThat(read).containsExactly("global");
        }
    }

    /**
     * A {@code BEFORE_COMMIT} listener that calls a fenced method joining the transaction: the
     * fence it asks for during the commit phase is stamped before the commit.
     */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aFenceAskedForDuringTheCommitPhaseIsStampedBeforeTheCommit(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.writeOrder("unfenced-until-commit", term.token());
                                        TransactionSynchronizationManager.registerSynchronization(
                                                new TransactionSynchronization() {
                                                    @Override
                                                    public void beforeCommit(boolean readOnly) {
                                                        f.fencing.fence();
                                                        f.writeOrder("at-commit", term.token());
                                                    }
                                                });
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("at-commit", "unfenced-until-commit");
            assertThat(f.fenceToken()).isEqualTo(term.token());
            assertThat(f.stamps()).isEqualTo(1);
        }
    }

    /** After the stamp (here: after the commit), asking for the fence is refused. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aFenceAskedForAfterTheStampIsRefused(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            List<Throwable> refused = new CopyOnWriteArrayList<>();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        TransactionSynchronizationManager.registerSynchronization(
                                                new TransactionSynchronization() {
                                                    @Override
                                                    public void afterCommit() {
                                                        try {
                                                            f.fencing.fence();
                                                        } catch (RuntimeException ex) {
                                                            refused.add(ex);
                                                        }
                                                    }
                                                });
                                        return null;
                                    }));
            assertThat(refused)
                    .singleElement()
                    .isInstanceOf(UnfencedTransactionException.class)
                    .extracting(Throwable::getMessage)
                    .asString()
                    .contains("already stamped");
        }
    }

    /**
     * Inside a transaction of another data source's transaction manager, a connection of the fenced
     * data source that JdbcClient bound to the thread runs in auto-commit: it is no transaction to
     * fence.
     */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aConnectionBoundOutsideATransactionOfTheFencedDataSourceIsRefused(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            TransactionTemplate otherTx =
                    new TransactionTemplate(
                            new org.springframework.jdbc.datasource.DataSourceTransactionManager(
                                    Database.H2.dataSource()));
            assertThatExceptionOfType(UnfencedTransactionException.class)
                    .isThrownBy(
                            () ->
                                    inTerm(
                                            term,
                                            () ->
                                                    otherTx.execute(
                                                            status -> {
                                                                f.orderIds();
                                                                f.fencing.fence();
                                                                f.writeOrder(
                                                                        "autocommitted",
                                                                        term.token());
                                                                return null;
                                                            })));
            assertThat(f.orderIds()).isEmpty();
        }
    }

    /**
     * The scenario: a leader is frozen in the middle of a transaction; it resumes after its
     * successor was elected but before the successor's first fenced commit. The successor's
     * election claimed the fence row, so the old transaction is refused.
     */
    @ParameterizedTest
    @EnumSource(Database.class)
    void aTransactionOfAnOlderTermIsRefusedOnceANewerTermIsElected(Database database) {
        try (Fixture f = new Fixture(database, true)) {
            Term older = f.leadership.lead();
            CountDownLatch wrote = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            CompletableFuture<Object> frozen =
                    Fixture.laterInTerm(
                            older,
                            new CountDownLatch(0),
                            () ->
                                    f.tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                f.writeOrder("frozen", older.token());
                                                wrote.countDown();
                                                awaitLatch(resume);
                                                return null;
                                            }));
            awaitLatch(wrote);
            Term newer = f.leadership.next(older);
            // no transaction of the newer term ran; its election alone claimed the row (or a
            // later term's did, if the newer term ended meanwhile on a busy machine)
            await().atMost(Duration.ofSeconds(20)).until(() -> f.fenceToken() >= newer.token());
            resume.countDown();
            assertThatExceptionOfType(ExecutionException.class)
                    .isThrownBy(() -> frozen.get(20, TimeUnit.SECONDS))
                    .havingCause()
                    .isInstanceOfSatisfying(
                            FencedOutException.class,
                            ex -> {
                                assertThat(ex.token()).isEqualTo(older.token());
                                assertThat(ex.newerToken()).isGreaterThanOrEqualTo(newer.token());
                            });
            assertThat(f.orderIds()).isEmpty();
            assertThat(f.stamps()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void globalListenerRefusesANewInnerTransactionWithoutATermBeforeItBegins(Database database) {
        try (Fixture f = new Fixture(database)) {
            f.transactionManager.addListener(new FencingTransactionListener(f.fencing, ""));
            TransactionTemplate readOnly = new TransactionTemplate(f.transactionManager);
            readOnly.setReadOnly(true);
            TransactionTemplate requiresNew = new TransactionTemplate(f.transactionManager);
            requiresNew.setPropagationBehavior(
                    org.springframework.transaction.TransactionDefinition.PROPAGATION_REQUIRES_NEW);
            AtomicBoolean ran = new AtomicBoolean();
            List<String> read =
                    readOnly.execute(
                            status -> {
                                assertThatExceptionOfType(UnfencedTransactionException.class)
                                        .isThrownBy(
                                                () ->
                                                        requiresNew.execute(
                                                                inner -> {
                                                                    ran.set(true);
                                                                    return null;
                                                                }))
                                        .withMessageContaining("needs a leadership term");
                                // the outer transaction goes on
                                return f.orderIds();
                            });
            assertThat(read).isEmpty();
            assertThat(ran).isFalse();
            assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aTransactionManagerWithoutTheListenerIsRefused(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            TransactionTemplate plain =
                    new TransactionTemplate(
                            new org.springframework.jdbc.datasource.DataSourceTransactionManager(
                                    f.dataSource));
            assertThatExceptionOfType(UnfencedTransactionException.class)
                    .isThrownBy(
                            () ->
                                    inTerm(
                                            term,
                                            () ->
                                                    plain.execute(
                                                            status -> {
                                                                f.fencing.fence();
                                                                f.writeOrder("x", term.token());
                                                                return null;
                                                            })))
                    .withMessageContaining("FencingTransactionListener");
            assertThat(f.orderIds()).isEmpty();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aNestedFencedCallJoinsTheOuterStampAndARolledBackSavepointKeepsItFenced(
            Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            TransactionTemplate nested = new TransactionTemplate(f.transactionManager);
            nested.setPropagationBehavior(
                    org.springframework.transaction.TransactionDefinition.PROPAGATION_NESTED);
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        f.writeOrder("outer", term.token());
                                        nested.executeWithoutResult(
                                                inner -> {
                                                    f.fencing.fence();
                                                    f.writeOrder("rolled-back", term.token());
                                                    inner.setRollbackOnly();
                                                });
                                        nested.executeWithoutResult(
                                                inner -> {
                                                    f.fencing.fence();
                                                    f.writeOrder("inner", term.token());
                                                });
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("inner", "outer");
            assertThat(f.stamps()).isEqualTo(1);
            assertThat(f.fenceToken()).isEqualTo(term.token());
        }
    }

    private static Object stampOnly(Fixture f) {
        f.fencing.fence();
        return null;
    }

    /**
     * After the fence's stamp (the fixture's hook runs in a transaction listener after the fencing
     * listener), signals and waits, holding the fence row's lock, then records the commit.
     */
    private static void holdAfterStamp(
            Fixture f,
            CountDownLatch stamped,
            CountDownLatch release,
            List<Long> commits,
            long token) {
        f.afterStamp.set(
                () -> {
                    stamped.countDown();
                    awaitLatch(release);
                });
        recordCommit(commits, token);
    }

    /** Reads the fence row's stamp count in the transaction, after its own stamp. */
    private static void readStampsAfterStamp(Fixture f, AtomicLong seen) {
        f.afterStamp.set(() -> seen.set(f.stamps()));
    }

    private static void recordCommit(List<Long> commits, long token) {
        TransactionSynchronizationManager.registerSynchronization(
                new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        commits.add(token);
                    }
                });
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("latch not released within 30 s");
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
