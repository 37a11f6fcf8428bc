package io.redlease.jdbc;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.test.RedisServer;
import io.redlease.test.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A fenced JDBC transaction and the term's local deadline (documented): the SQL fence compares
 * tokens, not clocks, so a transaction fenced, or committing, past its term's deadline commits
 * while no newer term has claimed the row, and is refused (a {@code FencedOutException} at its
 * commit) once one has, as a stale leader's transaction is. The elector's clock is moved past the
 * deadline (TTL 30 s, so nothing else ends the term). Embedded H2.
 */
class TransactionFencingDeadlineTests {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final AtomicLong clockOffset = new AtomicLong();

    private LettuceConnectionFactory factory;

    private Elector elector;

    private TransactionFencing fencing;

    private TransactionTemplate tx;

    private JdbcClient jdbc;

    private final String orders = Database.uniqueName("rl_orders");

    @BeforeEach
    void setUp() {
        RedisServer server = RedisServers.shared();
        factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        factory.start();
        elector =
                new Elector(
                        factory,
                        ElectorConfig.builder(
                                        "jdbc-deadline-" + Long.toHexString(System.nanoTime()))
                                .ttl(TTL)
                                .renewInterval(TTL.dividedBy(3))
                                .acquireInterval(Duration.ofMillis(100))
                                .clock(() -> System.nanoTime() + clockOffset.get())
                                .build());
        DataSource dataSource = Database.H2.dataSource();
        FenceTable fence = new FenceTable(dataSource, Database.uniqueName("rl_fence"));
        new FenceSchema(fence, Database.H2.platform).create();
        new JdbcTemplate(dataSource)
                .execute(
                        "CREATE TABLE "
                                + orders
                                + " (id VARCHAR(40) NOT NULL PRIMARY KEY, token BIGINT NOT NULL)");
        fence.addRow(elector.name());
        fencing = new TransactionFencing(fence, new LeadershipContext(Elections.of(elector)));
        DataSourceTransactionManager manager = new DataSourceTransactionManager(dataSource);
        manager.addListener(new FencingTransactionListener(fencing));
        tx = new TransactionTemplate(manager);
        jdbc = JdbcClient.create(dataSource);
        elector.start();
        await().atMost(scaled(Duration.ofSeconds(10))).until(elector::isLeader);
    }

    @AfterEach
    void tearDown() {
        elector.close();
        factory.destroy();
    }

    private void passTheDeadline() {
        clockOffset.set(TTL.plusSeconds(1).toNanos());
    }

    private List<String> orderIds() {
        return jdbc.sql("SELECT id FROM " + orders + " ORDER BY id").query(String.class).list();
    }

    /**
     * A transaction fenced and written in the term, whose commit comes past the deadline: no newer
     * term claimed the row, so it commits (the documented token-only case).
     */
    @Test
    void aFencedTransactionFencedInTimeCommitsPastTheDeadlineWhileNoNewerTermClaimed() {
        Term term = elector.term().orElseThrow();
        Throwable failure =
                catchThrowable(
                        () ->
                                term.execute(
                                        () ->
                                                tx.execute(
                                                        status -> {
                                                            fencing.fence();
                                                            jdbc.sql(
                                                                            "INSERT INTO "
                                                                                    + orders
                                                                                    + " (id, token) VALUES (?, ?)")
                                                                    .params(
                                                                            "late-commit",
                                                                            term.token())
                                                                    .update();
                                                            passTheDeadline(); // a pause before the
                                                            // commit
                                                            return null;
                                                        }),
                                        false));
        assertThat(failure).isNull();
        assertThat(orderIds()).containsExactly("late-commit");
    }

    /**
     * A new fenced transaction begun past the deadline, inside a run whose term is bound (work of
     * the run after its deadline, e.g. a loop over a batch, REQUIRES_NEW per item): no newer term
     * claimed the row, so it commits (the documented token-only case).
     */
    @Test
    void aFencedTransactionBegunPastTheDeadlineCommitsWhileNoNewerTermClaimed() {
        Term term = elector.term().orElseThrow();
        TransactionTemplate requiresNew = new TransactionTemplate(tx.getTransactionManager());
        requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        Throwable failure =
                catchThrowable(
                        () ->
                                term.execute(
                                        () -> {
                                            passTheDeadline(); // the run outlived its term
                                            return requiresNew.execute(
                                                    status -> {
                                                        fencing.fence();
                                                        jdbc.sql(
                                                                        "INSERT INTO "
                                                                                + orders
                                                                                + " (id, token) VALUES (?, ?)")
                                                                .params("late-begin", term.token())
                                                                .update();
                                                        return null;
                                                    });
                                        },
                                        false));
        assertThat(failure).isNull();
        assertThat(orderIds()).containsExactly("late-begin");
    }
}
