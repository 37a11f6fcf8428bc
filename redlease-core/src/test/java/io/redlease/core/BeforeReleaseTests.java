package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The {@link BeforeRelease} hook: awaited on a graceful step-down, skipped on a lost lease. */
@ExtendWith(RedisExtension.class)
class BeforeReleaseTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final List<Hook> hooks = new CopyOnWriteArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        hooks.forEach(hook -> hook.done.complete(null));
        electors.forEach(Elector::close);
        templates.close();
    }

    private Elector elector(String id, Duration drain, BeforeRelease hook) {
        if (hook instanceof Hook recorded) {
            hooks.add(recorded);
        }
        ElectorConfig config =
                ElectorConfig.builder(name)
                        .ttl(Duration.ofSeconds(1))
                        .renewInterval(Duration.ofMillis(50))
                        .acquireInterval(Duration.ofMillis(50))
                        .instanceId(id)
                        .drainTimeout(drain)
                        .beforeRelease(hook)
                        .build();
        Elector elector = new Elector(redis, config);
        electors.add(elector);
        return elector;
    }

    private String lease() {
        return redis.opsForValue().get(name + ":leader");
    }

    /** A hook that records its calls and completes when the test says so. */
    private static final class Hook implements BeforeRelease {

        final List<Term> terms = new CopyOnWriteArrayList<>();

        final List<String> threads = new CopyOnWriteArrayList<>();

        final CompletableFuture<Void> done = new CompletableFuture<>();

        @Override
        public CompletableFuture<Void> beforeRelease(Term term) {
            // The thread first: a test that sees the term sees its thread.
            threads.add(Thread.currentThread().getName());
            terms.add(term);
            return done;
        }
    }

    @Test
    void stopReleasesTheLeaseOnlyAfterTheHookCompleted() {
        Hook hook = new Hook();
        Elector elector = elector("a", Duration.ofSeconds(30), hook);
        elector.start();
        await().until(elector::isLeader);
        CompletableFuture<Void> stopped = elector.stopAsync();
        await().until(() -> hook.terms.size() == 1);
        Term term = hook.terms.get(0);
        assertThat(term.isActive()).isFalse();
        assertThat(term.endReason()).contains(StepDownReason.SHUTDOWN);
        assertThat(hook.threads.get(0)).doesNotStartWith("redlease-loop");
        assertThat(lease()).isEqualTo("a");
        assertThat(stopped).isNotDone();
        hook.done.complete(null);
        stopped.join();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void aSuccessorWinsOnlyAfterTheResigningLeadersHookCompleted() {
        Hook first = new Hook();
        Elector a = elector("a", Duration.ofSeconds(30), first);
        a.start();
        await().until(a::isLeader);
        Hook second = new Hook();
        Elector b = elector("b", Duration.ofSeconds(30), second);
        b.start();
        a.resign();
        await().until(() -> first.terms.size() == 1);
        assertThat(first.terms.get(0).endReason()).contains(StepDownReason.RESIGNED);
        assertThat(lease()).isEqualTo("a");
        assertThat(b.isLeader()).isFalse();
        first.done.complete(null);
        await().until(() -> b.isLeader() || a.isLeader());
        assertThat(lease()).isNotNull();
    }

    @Test
    void aHookThatNeverCompletesIsBoundedByTheDrainTimeout() {
        Hook hook = new Hook();
        Elector elector = elector("a", Duration.ofMillis(200), hook);
        elector.start();
        await().until(elector::isLeader);
        elector.stop();
        assertThat(hook.terms).hasSize(1);
        assertThat(redis.hasKey(name + ":leader")).isFalse();
        assertThat(elector.isRunning()).isFalse();
    }

    @Test
    void aHookThatThrowsDoesNotHoldTheRelease() {
        AtomicInteger calls = new AtomicInteger();
        Elector elector =
                elector(
                        "a",
                        Duration.ofSeconds(30),
                        term -> {
                            calls.incrementAndGet();
                            throw new IllegalStateException("boom");
                        });
        elector.start();
        await().until(elector::isLeader);
        elector.stop();
        assertThat(calls).hasValue(1);
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void aLostLeaseIsNotHeldForTheHook() {
        Hook hook = new Hook();
        Elector elector = elector("a", Duration.ofSeconds(30), hook);
        elector.start();
        await().until(elector::isLeader);
        Term term = elector.term().orElseThrow();
        redis.opsForValue().set(name + ":leader", "intruder", Duration.ofSeconds(30));
        await().until(() -> !term.isActive());
        assertThat(term.endReason()).contains(StepDownReason.LOST);
        await().until(() -> !elector.isLeader());
        assertThat(hook.terms).isEmpty();
    }

    @Test
    void theHookIsKeptByToBuilder() {
        Hook hook = new Hook();
        ElectorConfig config = ElectorConfig.builder(name).beforeRelease(hook).build();
        assertThat(config.toBuilder().build().beforeRelease()).containsExactly(hook);
    }
}
