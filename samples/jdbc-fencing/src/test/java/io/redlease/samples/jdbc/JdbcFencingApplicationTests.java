package io.redlease.samples.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample against a real Redis and the real PostgreSQL (127.0.0.1:5432, database {@code test}):
 * the leader's writes apply, a stale token's update and upsert change nothing.
 */
@SpringBootTest(properties = "sample.interval=50ms")
@TestRedis
class JdbcFencingApplicationTests {

    private static final String TABLE = "fenced_state_test_" + System.nanoTime();

    private static JdbcTemplate cleanup;

    @DynamicPropertySource
    static void services(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> "{jdbc-test-" + System.nanoTime() + "}");
        registry.add("sample.table", () -> TABLE);
    }

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    @Autowired private FencedState state;

    @Autowired
    void keep(JdbcTemplate jdbc) {
        cleanup = jdbc;
    }

    @AfterAll
    static void dropTable() {
        if (cleanup != null) {
            cleanup.execute("DROP TABLE IF EXISTS " + TABLE);
        }
    }

    @Test
    void theLeaderWritesUnderItsToken() {
        Term term = tester.awaitLeadership();
        long token = term.token();
        await().until(() -> state.read("leader-status").isPresent());
        FencedState.Row row = state.read("leader-status").orElseThrow();
        assertThat(row.fence()).isEqualTo(token);
        assertThat(row.value()).startsWith(elector.instanceId() + " at ");
    }

    @Test
    void aNewTermWritesWithItsNewerToken() {
        Term first = tester.awaitLeadership();
        await().until(
                        () ->
                                state.read("leader-status").map(FencedState.Row::fence).orElse(0L)
                                        >= first.token());
        tester.stepDown();
        Term next = tester.awaitLeadership();
        assertThat(next.token()).isGreaterThan(first.token());
        await().until(() -> state.read("leader-status").orElseThrow().fence() == next.token());
    }

    @Test
    void aStaleTokenChangesNothing() {
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
}
