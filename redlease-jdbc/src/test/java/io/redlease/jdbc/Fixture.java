package io.redlease.jdbc;

import io.redlease.core.Term;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A database with a fence table and two data tables ({@code orders} and {@code ledger}) unique to
 * one test, an elector, and fencing over them. Closing drops the tables and stops the elector.
 */
final class Fixture implements AutoCloseable {

    final Database database;

    final DataSource dataSource;

    final FenceTable fence;

    final String orders = Database.uniqueName("rl_orders");

    final String ledger = Database.uniqueName("rl_ledger");

    final JdbcClient jdbc;

    final DataSourceTransactionManager transactionManager;

    final TransactionTemplate tx;

    final Leadership leadership;

    final TransactionFencing fencing;

    final List<String> outcomes = new CopyOnWriteArrayList<>();

    /** Run on the committing thread right after its transaction's stamp, once, when set. */
    final ThreadLocal<Runnable> afterStamp = new ThreadLocal<>();

    /** The claims of newly elected terms, when the fixture makes them; else null. */
    final @Nullable FenceClaims claims;

    Fixture(Database database) {
        this(database, false);
    }

    /**
     * A fixture whose elector claims the fence row of each newly elected term (with a one-second
     * claim timeout) when {@code claims} is true.
     */
    Fixture(Database database, boolean claims) {
        this.database = database;
        this.dataSource = database.dataSource();
        this.fence = new FenceTable(dataSource, Database.uniqueName("rl_fence"));
        new FenceSchema(fence, database.platform).create();
        JdbcTemplate ddl = new JdbcTemplate(dataSource);
        ddl.execute(
                "CREATE TABLE "
                        + orders
                        + " (id VARCHAR(40) NOT NULL PRIMARY KEY, token BIGINT NOT NULL)");
        ddl.execute(
                "CREATE TABLE "
                        + ledger
                        + " (id VARCHAR(40) NOT NULL PRIMARY KEY, amount BIGINT NOT NULL)");
        this.jdbc = JdbcClient.create(dataSource);
        this.transactionManager = new DataSourceTransactionManager(dataSource);
        this.tx = new TransactionTemplate(transactionManager);
        this.claims =
                claims
                        ? new FenceClaims(
                                List.of(fence),
                                Duration.ofSeconds(1),
                                new FencedTransactionListener() {
                                    @Override
                                    public void onClaimed(String election, long token, String t) {
                                        outcomes.add("claimed " + election + " " + token);
                                    }
                                })
                        : null;
        this.leadership =
                this.claims == null
                        ? new Leadership("jdbc-fence")
                        : new Leadership("jdbc-fence", this.claims::observer);
        // as the Boot auto-configuration does at startup for every election
        fence.addRow(leadership.name());
        this.fencing =
                new TransactionFencing(
                        fence,
                        leadership.context,
                        new FencedTransactionListener() {
                            @Override
                            public void onCommitted(String electionName, long token) {
                                outcomes.add("committed " + electionName + " " + token);
                            }

                            @Override
                            public void onRefused(String electionName, long token, long newer) {
                                outcomes.add("refused " + electionName + " " + token + " " + newer);
                            }
                        });
        // as the Boot auto-configuration does for every transaction manager of the DataSource
        transactionManager.addListener(new FencingTransactionListener(fencing));
        transactionManager.addListener(
                new TransactionExecutionListener() {
                    @Override
                    public void beforeCommit(TransactionExecution transaction) {
                        Runnable hook = afterStamp.get();
                        if (hook != null && transaction.isNewTransaction()) {
                            afterStamp.remove();
                            hook.run();
                        }
                    }
                });
    }

    /** Writes an order and its ledger entry, two tables, in the transaction in progress. */
    void writeOrder(String id, long token) {
        jdbc.sql("INSERT INTO " + orders + " (id, token) VALUES (?, ?)").params(id, token).update();
        jdbc.sql("INSERT INTO " + ledger + " (id, amount) VALUES (?, ?)").params(id, 100L).update();
    }

    List<String> orderIds() {
        return jdbc.sql("SELECT id FROM " + orders + " ORDER BY id").query(String.class).list();
    }

    List<String> ledgerIds() {
        return jdbc.sql("SELECT id FROM " + ledger + " ORDER BY id").query(String.class).list();
    }

    long fenceToken() {
        return fence.token(leadership.name()).orElseThrow();
    }

    /**
     * Enters the term on a new thread at once (a term can only be entered while it is active), then
     * runs work there once {@code go} is released, possibly after the term ended.
     */
    static <T> CompletableFuture<T> laterInTerm(Term term, CountDownLatch go, Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        CountDownLatch entered = new CountDownLatch(1);
        Callable<T> waitThenWork =
                () -> {
                    entered.countDown();
                    if (!go.await(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("not released within 30 s");
                    }
                    return work.call();
                };
        Thread thread =
                new Thread(
                        () -> {
                            try {
                                result.complete(term.execute(waitThenWork, false));
                            } catch (Throwable ex) {
                                entered.countDown();
                                result.completeExceptionally(ex);
                            }
                        },
                        "in-term-" + term.token());
        thread.start();
        try {
            if (!entered.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the thread did not enter the term");
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        return result;
    }

    long stamps() {
        return jdbc.sql("SELECT stamps FROM " + fence.name() + " WHERE name = ?")
                .param(leadership.name())
                .query(Long.class)
                .single();
    }

    /** Runs work on the calling thread in the term, not interrupted if the term ends. */
    static <T> T inTerm(Term term, Callable<T> work) {
        try {
            return term.execute(work, false);
        } catch (RuntimeException ex) {
            throw ex;
        } catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() {
        leadership.close();
        if (claims != null) {
            claims.close();
        }
        JdbcTemplate ddl = new JdbcTemplate(dataSource);
        for (String table : List.of(orders, ledger, fence.name())) {
            ddl.execute("DROP TABLE " + table);
        }
    }
}
