package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Term;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * At every isolation level, an older term's transaction whose snapshot predates the newer term's
 * commit is rolled back: with {@link FencedOutException} where the database re-reads the row for
 * the update, with a serialization failure where it cannot. Its snapshot is taken early on purpose
 * (it reads the fence row first), which is the case InnoDB's consistent reads would get wrong
 * without the always-changing update.
 */
class IsolationLevelTests {

    static Stream<Arguments> levels() {
        return Stream.of(Database.values())
                .flatMap(
                        database ->
                                Stream.of(
                                                TransactionDefinition.ISOLATION_READ_UNCOMMITTED,
                                                TransactionDefinition.ISOLATION_READ_COMMITTED,
                                                TransactionDefinition.ISOLATION_REPEATABLE_READ,
                                                TransactionDefinition.ISOLATION_SERIALIZABLE)
                                        .map(level -> Arguments.of(database, level)));
    }

    @ParameterizedTest(name = "{0} isolation {1}")
    @MethodSource("levels")
    void olderTermsTransactionNeverCommitsAfterTheNewerOnes(Database database, int isolation)
            throws Exception {
        try (Fixture f = new Fixture(database)) {
            TransactionTemplate tx = new TransactionTemplate(f.transactionManager);
            tx.setIsolationLevel(isolation);
            Term older = f.leadership.lead();
            List<String> commits = new CopyOnWriteArrayList<>();
            CountDownLatch snapshotTaken = new CountDownLatch(1);
            CountDownLatch newerCommitted = new CountDownLatch(1);
            CompletableFuture<Object> olderTx =
                    Fixture.laterInTerm(
                            older,
                            new CountDownLatch(0),
                            () ->
                                    tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                assertThat(f.fence.token(f.leadership.name()))
                                                        .hasValue(0);
                                                f.writeOrder("older", older.token());
                                                recordCommit(commits, "older");
                                                snapshotTaken.countDown();
                                                await(newerCommitted);
                                                return null;
                                            }));
            assertThat(snapshotTaken.await(20, TimeUnit.SECONDS)).isTrue();
            Term newer = f.leadership.next(older);
            CompletableFuture<Object> newerTx =
                    Fixture.laterInTerm(
                            newer,
                            new CountDownLatch(0),
                            () ->
                                    tx.execute(
                                            status -> {
                                                f.fencing.fence();
                                                f.writeOrder("newer", newer.token());
                                                recordCommit(commits, "newer");
                                                return null;
                                            }));
            // Usually the newer transaction commits now. Under InnoDB's SERIALIZABLE the older
            // one's read holds a shared lock on the fence row, so the newer one waits instead.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .until(
                            () ->
                                    newerTx.isDone()
                                            || database.lockWaits(f.dataSource, f.fence.name())
                                                    > 0);
            newerCommitted.countDown();
            Throwable olderFailure = outcome(olderTx);
            Throwable newerFailure = outcome(newerTx);
            if (commits.contains("older")) {
                // allowed only before the newer one
                assertThat(commits).startsWith("older");
            } else {
                assertThat(olderFailure)
                        .isInstanceOfAny(
                                FencedOutException.class, ConcurrencyFailureException.class);
            }
            if (newerFailure == null) {
                assertThat(commits).endsWith("newer");
                assertThat(f.fenceToken()).isEqualTo(newer.token());
            }
            assertThat(f.orderIds()).hasSameElementsAs(commits);
            assertThat(f.ledgerIds()).hasSameElementsAs(commits);
            outcomes.add(
                    database
                            + " isolation "
                            + isolation
                            + ": commits "
                            + commits
                            + ", older "
                            + (olderFailure == null
                                    ? "committed"
                                    : olderFailure.getClass().getSimpleName())
                            + ", newer "
                            + (newerFailure == null
                                    ? "committed"
                                    : newerFailure.getClass().getSimpleName()));
        }
    }

    private static final List<String> outcomes = new CopyOnWriteArrayList<>();

    @AfterAll
    static void report() {
        outcomes.forEach(System.out::println);
    }

    private static Throwable outcome(CompletableFuture<Object> transaction) throws Exception {
        try {
            transaction.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException ex) {
            return ex.getCause();
        }
    }

    private static void recordCommit(List<String> commits, String id) {
        TransactionSynchronizationManager.registerSynchronization(
                new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        commits.add(id);
                    }
                });
    }

    private static void await(CountDownLatch latch) {
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
