package io.redlease.docs.quickstart;

// tag::test-kit[]
import static io.redlease.boot.test.RedleaseAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.RedleaseTester.ForeignLease;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

@SpringBootTest
@TestRedis // a real Redis for the test JVM
class ReportJobTests {

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) { // an election of the test's own
        registry.add("redlease.name", () -> "{reports-" + System.nanoTime() + "}");
    }

    @Autowired RedleaseTester tester;

    @Autowired Elector elector;

    @Test
    void aStaleLeaderIsFencedOut() {
        Term term = tester.awaitLeadership(); // this instance leads
        assertThat(elector).isLeader().holdsTheLease();

        long newer = tester.startNewerTerm(); // as if another instance won a newer term
        assertThat(term.fencer().set(tester.name() + ":x", "late")).isFalse(); // refused
        await().until(() -> elector.token().orElse(0) > newer); // it steps down, then wins again

        try (ForeignLease other = tester.stealLease()) { // another instance holds the lease
            tester.awaitFollower(); // @LeaderOnly methods are skipped now
        }
        tester.awaitLeadership(); // the lease is free again: it wins a new term
        Term ended = tester.stepDown(); // ends that term; it contends again
        assertThat(ended.isActive()).isFalse();
    }
}
// end::test-kit[]
