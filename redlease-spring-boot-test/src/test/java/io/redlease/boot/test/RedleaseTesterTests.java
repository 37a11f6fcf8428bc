package io.redlease.boot.test;

import static io.redlease.boot.test.RedleaseAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.KitTestApplication.Job;
import io.redlease.boot.test.RedleaseTester.ForeignLease;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.test.RedisServers;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The test kit, used the way an application's test uses it. */
@SpringBootTest(
        classes = KitTestApplication.class,
        properties = {
            "redlease.ttl=1s",
            "redlease.renew-interval=100ms",
            "redlease.acquire-interval=200ms"
        })
@TestRedis
class RedleaseTesterTests {

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> "{kit-test-" + System.nanoTime() + "}");
    }

    @Autowired private RedleaseTester tester;

    @Autowired private Elector elector;

    @Autowired private Job job;

    @Autowired private Environment environment;

    @Test
    void theContextUsesTheSharedTestRedis() {
        assertThat(environment.getProperty("spring.data.redis.url"))
                .isEqualTo(RedisServers.shared().url());
        assertThat(tester.elector()).isSameAs(elector);
    }

    @Test
    void awaitLeadershipReturnsTheTermTheJobRunsIn() {
        Term term = tester.awaitLeadership();
        assertThat(elector).isLeader().hasToken(term.token()).holdsTheLease();
        await().until(() -> job.ran().contains(term.token()));
        assertThat(tester.lastToken()).isGreaterThanOrEqualTo(term.token());
    }

    @Test
    void steppingDownEndsTheTermAndInterruptsTheJob() {
        Term term = tester.awaitLeadership();
        await().until(() -> job.ran().contains(term.token()));
        Term ended = tester.stepDown();
        assertThat(ended.token()).isEqualTo(term.token());
        assertThat(ended.isActive()).isFalse();
        await().until(() -> job.interrupted().contains(term.token()));
        assertThat(tester.awaitLeadership().token()).isGreaterThan(term.token());
    }

    @Test
    void aStolenLeaseMakesThisInstanceFollowUntilItIsReleased() {
        Term term = tester.awaitLeadership();
        try (ForeignLease lease = tester.stealLease()) {
            tester.awaitFollower();
            assertThat(elector).isFollower().doesNotHoldTheLease();
            assertThat(tester.holder()).hasValue(lease.instanceId());
            assertThat(lease.token()).isEmpty();
            await().until(() -> job.interrupted().contains(term.token()));
        }
        assertThat(tester.awaitLeadership().token()).isGreaterThan(term.token());
        assertThat(elector).holdsTheLease();
    }

    @Test
    void aNewerTermRefusesThisInstancesFencedWrites() {
        Term term = tester.awaitLeadership();
        long newer = tester.startNewerTerm();
        assertThat(newer).isGreaterThan(term.token());
        assertThat(tester.appliedMark()).isEqualTo(newer);
        assertThat(term.fencer().set(tester.name() + ":state", "stale")).isFalse();
        // The instance notices at its next renewal and wins a term after the newer one.
        await().until(() -> elector.token().orElse(0) > newer);
        assertThat(elector.fencer().orElseThrow().set(tester.name() + ":state", "fresh")).isTrue();
    }

    @Test
    void handingLeadershipToAnotherInstance() {
        Term term = tester.awaitLeadership();
        ForeignLease other = tester.handLeadershipTo("another-instance");
        tester.awaitFollower();
        assertThat(tester.holder()).hasValue("another-instance");
        assertThat(other.token()).isPresent();
        assertThat(other.token().getAsLong()).isGreaterThan(term.token());
        assertThat(term.fencer().set(tester.name() + ":state", "stale")).isFalse();
        other.release();
        assertThat(tester.awaitLeadership().token()).isGreaterThan(other.token().getAsLong());
    }

    @Test
    void leadershipCannotBeHandedToThisInstance() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> tester.handLeadershipTo(elector.instanceId()))
                .withMessageContaining("instanceId must name another instance");
    }
}
