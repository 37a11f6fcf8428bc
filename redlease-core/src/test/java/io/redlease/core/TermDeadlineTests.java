package io.redlease.core;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

/**
 * A term ends at its local deadline: past it the term is no longer active, and no leader-only work
 * starts in it, on any path; such a start ends the term as an expiry. The elector's clock is moved
 * past the deadline while Redis keeps answering, so only the deadline rule (not a failed renewal,
 * nor the watchdog, whose timer runs on real time) can refuse the start.
 */
@ExtendWith(RedisExtension.class)
class TermDeadlineTests {

    /** Long enough that nothing but the clock's jump puts the term past its deadline. */
    private static final Duration TTL = Duration.ofSeconds(30);

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final AtomicLong clockOffset = new AtomicLong();

    private Elector elector;

    private Term term;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        elector =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(Names.unique(info))
                                .ttl(TTL)
                                .renewInterval(TTL.dividedBy(3))
                                .acquireInterval(Duration.ofMillis(100))
                                .instanceId("a")
                                .clock(() -> System.nanoTime() + clockOffset.get())
                                .build());
        electors.add(elector);
        elector.start();
        await().atMost(scaled(Duration.ofSeconds(10))).until(elector::isLeader);
        term = elector.term().orElseThrow();
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    private void passTheDeadline() {
        clockOffset.set(TTL.plusSeconds(1).toNanos());
    }

    private void awaitExpiry() {
        await().atMost(scaled(Duration.ofSeconds(5))).until(() -> term.endReason().isPresent());
        assertThat(term.endReason()).contains(StepDownReason.EXPIRED);
    }

    @Test
    void aTermPastItsDeadlineIsNotActiveNorLedByTheElector() {
        assertThat(term.isActive()).isTrue();
        passTheDeadline();
        assertThat(term.isActive()).isFalse();
        assertThat(term.remaining()).isZero();
        assertThat(elector.isLeader()).isFalse();
        assertThat(elector.term()).isEmpty();
        assertThat(elector.token()).isEmpty();
        assertThat(elector.fencer()).isEmpty();
        awaitExpiry();
    }

    @Test
    void executePastTheDeadlineDoesNotStartTheWorkAndEndsTheTerm() {
        passTheDeadline();
        AtomicBoolean ran = new AtomicBoolean();
        assertThatExceptionOfType(TermEndedException.class)
                .isThrownBy(() -> term.execute(() -> ran.getAndSet(true)))
                .satisfies(ended -> assertThat(ended.isBeforeStart()).isTrue());
        assertThat(ran).isFalse();
        awaitExpiry();
    }

    @Test
    void executeAsyncPastTheDeadlineDoesNotStartTheWork() {
        passTheDeadline();
        AtomicBoolean ran = new AtomicBoolean();
        assertThatExceptionOfType(TermEndedException.class)
                .isThrownBy(
                        () ->
                                term.executeAsync(
                                        () ->
                                                CompletableFuture.completedFuture(
                                                        ran.getAndSet(true)),
                                        true))
                .satisfies(ended -> assertThat(ended.isBeforeStart()).isTrue());
        assertThat(ran).isFalse();
        awaitExpiry();
    }

    @Test
    void aReactiveSubscriptionPastTheDeadlineDoesNotObtainTheWork() {
        passTheDeadline();
        AtomicBoolean obtained = new AtomicBoolean();
        assertThatExceptionOfType(TermEndedException.class)
                .isThrownBy(
                        () ->
                                term.executeReactive(
                                                () -> {
                                                    obtained.set(true);
                                                    return Mono.just("work");
                                                },
                                                true)
                                        .blockLast(scaled(Duration.ofSeconds(5))))
                .satisfies(ended -> assertThat(ended.isBeforeStart()).isTrue());
        assertThat(obtained).isFalse();
        awaitExpiry();
    }

    @Test
    void aNestedCallPastTheDeadlineDoesNotStartEvenInsideAnOuterCallOfTheTerm() throws Exception {
        AtomicBoolean innerRan = new AtomicBoolean();
        Throwable inner =
                term.execute(
                        () -> {
                            passTheDeadline();
                            try {
                                term.execute(() -> innerRan.getAndSet(true));
                                return null;
                            } catch (TermEndedException ex) {
                                return ex;
                            }
                        },
                        false);
        assertThat(inner)
                .isInstanceOfSatisfying(
                        TermEndedException.class,
                        ended -> assertThat(ended.isBeforeStart()).isTrue());
        assertThat(innerRan).isFalse();
        awaitExpiry();
    }

    @Test
    void aSlotLedgerCallPastTheDeadlineIsNotSent() {
        SlotLedger ledger = new SlotLedger(elector, "nightly");
        Instant slot = Instant.parse("2030-01-01T00:00:00Z");
        passTheDeadline();
        assertThat(ledger.claim(term, slot, null)).isEmpty();
        assertThat(ledger.mark(term, slot, slot.plusSeconds(1), slot))
                .isEqualTo(SlotLedger.Mark.LEASE_LOST);
        assertThat(ledger.read()).isEqualTo(SlotLedger.State.EMPTY);
    }
}
