package io.redlease.samples.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.jdbc.FenceTable;
import io.redlease.jdbc.FencedOutException;
import io.redlease.test.PostgresServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The sample against a real Redis and a real PostgreSQL, both started by the tests on free ports
 * ({@link TestRedis}, {@link PostgresServer#shared()}): the leader's JPA settlements write both
 * tables under its token; a stale term's settlement is rolled back in both; the hand-written
 * conditional update refuses a stale token too.
 */
@SpringBootTest(properties = "sample.interval=50ms")
@TestRedis
class JdbcFencingApplicationTests {

    private static final String TABLE = "fenced_state_test_" + System.nanoTime();

    private static final String ACCOUNT = "account-" + System.nanoTime();

    /** Generous: the machine running the tests may be busy; each wait ends as soon as it holds. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static JdbcTemplate cleanup;

    @DynamicPropertySource
    static void services(DynamicPropertyRegistry registry) {
        PostgresServer postgres = PostgresServer.shared();
        registry.add("spring.datasource.url", postgres::jdbcUrl);
        registry.add("spring.datasource.username", postgres::username);
        registry.add("spring.datasource.password", postgres::password);
        registry.add("redlease.name", () -> "{jdbc-test-" + System.nanoTime() + "}");
        registry.add("sample.table", () -> TABLE);
        registry.add("sample.account", () -> ACCOUNT);
    }

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    @Autowired private Settlements settlements;

    @Autowired private Ledger ledger;

    @Autowired private Accounts accounts;

    @Autowired private FenceTable fence;

    @Autowired private FencedState state;

    @Autowired private PlatformTransactionManager transactionManager;

    @Autowired
    void keep(JdbcTemplate jdbc) {
        cleanup = jdbc;
    }

    @AfterAll
    static void dropTable() {
        if (cleanup != null) {
            cleanup.execute("DROP TABLE IF EXISTS " + TABLE);
            cleanup.update("DELETE FROM jdbc_sample_ledger WHERE account_id = ?", ACCOUNT);
            cleanup.update("DELETE FROM jdbc_sample_account WHERE id = ?", ACCOUNT);
        }
    }

    @Test
    void theLeaderSettlesUnderItsTermInBothTables() {
        long token = tester.awaitLeadership().token();
        await().atMost(WAIT)
                .until(() -> entries().stream().anyMatch(entry -> entry.getToken() == token));
        assertBothTablesAgree();
        assertThat(fence.token(elector.name()).getAsLong()).isGreaterThanOrEqualTo(token);
    }

    @Test
    void aStaleTermsSettlementIsRolledBackInBothTables() throws Exception {
        Term older = tester.awaitLeadership();
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<LedgerEntry> stale = new CompletableFuture<>();
        CountDownLatch entered = new CountDownLatch(1);
        Thread paused =
                new Thread(
                        () -> {
                            try {
                                stale.complete(
                                        older.execute(
                                                () -> {
                                                    entered.countDown();
                                                    go.await(30, TimeUnit.SECONDS);
                                                    return settlements.settle("stale");
                                                },
                                                false));
                            } catch (Throwable ex) {
                                entered.countDown();
                                stale.completeExceptionally(ex);
                            }
                        });
        paused.start();
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        // A newer term starts and the scheduled job commits a settlement under it.
        elector.resign();
        await().atMost(WAIT).until(() -> elector.token().orElse(0) > older.token());
        long newer = elector.token().getAsLong();
        await().atMost(WAIT)
                .until(() -> entries().stream().anyMatch(entry -> entry.getToken() == newer));
        // The paused call of the older term wakes up and settles: refused, nothing written.
        go.countDown();
        assertThatExceptionOfType(ExecutionException.class)
                .isThrownBy(() -> stale.get(20, TimeUnit.SECONDS))
                .havingCause()
                .isInstanceOfSatisfying(
                        FencedOutException.class,
                        ex -> {
                            assertThat(ex.token()).isEqualTo(older.token());
                            assertThat(ex.newerToken()).isGreaterThanOrEqualTo(newer);
                        });
        assertThat(entries()).noneMatch(entry -> entry.getNote().equals("stale"));
        assertBothTablesAgree();
    }

    @Test
    void aStaleTokenChangesNothingWithTheHandWrittenCondition() {
        assertThat(state.write("account", "written by term 5", 5)).isTrue();
        assertThat(state.write("account", "written by term 7", 7)).isTrue();
        // A paused ex-leader with token 6 wakes up and tries both forms of the write.
        assertThat(state.update("account", "stale update", 6)).isFalse();
        assertThat(state.write("account", "stale upsert", 6)).isFalse();
        assertThat(state.read("account").orElseThrow())
                .isEqualTo(new FencedState.Row("written by term 7", 7));
        // The same term may write again; a newer one too.
        assertThat(state.update("account", "again by term 7", 7)).isTrue();
        assertThat(state.update("account", "term 8", 8)).isTrue();
        // Update is for existing rows: a missing row also changes zero rows.
        assertThat(state.update("missing", "x", 100)).isFalse();
    }

    private List<LedgerEntry> entries() {
        return ledger.findByAccountId(ACCOUNT);
    }

    /**
     * The balance is the sum of the ledger, read in one snapshot while the leader keeps writing.
     */
    private void assertBothTablesAgree() {
        TransactionTemplate snapshot = new TransactionTemplate(transactionManager);
        snapshot.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        snapshot.setReadOnly(true);
        snapshot.executeWithoutResult(
                status -> {
                    long balance = accounts.findById(ACCOUNT).orElseThrow().getBalance();
                    List<LedgerEntry> lines = entries();
                    assertThat(lines).isNotEmpty();
                    assertThat(balance).isEqualTo(Settlements.AMOUNT * lines.size());
                });
    }
}
