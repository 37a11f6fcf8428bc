package io.redlease.core;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The three outcomes of a fenced write: applied, refused, or unknown. A write never waits past its
 * term: with Redis frozen or stopped it ends, by the term's deadline, in a {@link
 * FenceOutcomeUnknownException}, never in the client's own timeout or a bare Redis exception; a
 * write attempted past the deadline is not sent and counts as refused.
 */
@ExtendWith(RedisExtension.class)
class FenceOutcomeTests {

    /** How long after its term's deadline a write may still be returning: scheduling slack. */
    private static final Duration SLACK = scaled(Duration.ofMillis(700));

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final Recorder recorder = new Recorder();

    private final AtomicLong clockOffset = new AtomicLong();

    private String name;

    @BeforeEach
    void setUp(TestInfo info) {
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::stopAsync);
        templates.close();
    }

    /** An elector whose client waits an hour for a reply: only redlease's own bounds end a call. */
    private Elector leader(RedisServer server, Duration ttl) {
        StringRedisTemplate redis = templates.withoutClientTimeouts(server.host(), server.port());
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(ttl)
                                .renewInterval(ttl.dividedBy(5))
                                .acquireInterval(ttl.dividedBy(10))
                                .drainTimeout(Duration.ofSeconds(2))
                                .instanceId("a")
                                .clock(() -> System.nanoTime() + clockOffset.get())
                                .observer(recorder)
                                .build());
        electors.add(elector);
        elector.start();
        await().atMost(scaled(Duration.ofSeconds(10))).until(elector::isLeader);
        return elector;
    }

    private static <T> CompletableFuture<T> onAnotherThread(Callable<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread thread =
                new Thread(
                        () -> {
                            try {
                                result.complete(call.call());
                            } catch (Throwable ex) {
                                result.completeExceptionally(ex);
                            }
                        },
                        "fenced-writer");
        thread.setDaemon(true);
        thread.start();
        return result;
    }

    /** Publishes a report through the fence and says which of the three outcomes it had. */
    static String publish(Fencer fencer, String key) {
        // tag::fence-outcomes[]
        try {
            fencer.hsetOrThrow(key, "status", "published");
            return "applied";
        } catch (FenceRefusedException refused) {
            // A newer term exists: stop here, the new leader publishes it.
            return "refused";
        } catch (FenceOutcomeUnknownException unknown) {
            // It may or may not have landed: publish it again, idempotently, in a later term.
            return "unknown";
        }
        // end::fence-outcomes[]
    }

    /** Returns what the write failed with, failing if it took longer than the bound. */
    private static Throwable failureOf(CompletableFuture<?> write, Duration bound)
            throws Exception {
        try {
            Object value = write.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("the write returned " + value + " instead of failing");
        } catch (ExecutionException ex) {
            return ex.getCause();
        }
    }

    @Test
    void aJobsWriteWithRedisFrozenEndsAsUnknownByItsTermsDeadline(@Dedicated RedisServer server)
            throws Exception {
        Elector elector = leader(server, Duration.ofSeconds(1));
        Term term = elector.term().orElseThrow();
        assertThat(term.fencer().hset(name + ":state", "run", "warm-up")).isTrue();
        server.pause();
        try {
            // As a @LeaderOnly job does: the write runs in a call bound to the term.
            CompletableFuture<Boolean> write =
                    onAnotherThread(
                            () ->
                                    term.execute(
                                            () -> term.fencer().hset(name + ":state", "run", "1")));
            Throwable failure = failureOf(write, Duration.ofSeconds(1).plus(SLACK));
            assertThat(failure)
                    .isInstanceOf(FenceOutcomeUnknownException.class)
                    .isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("token " + term.token())
                    .hasMessageContaining("may or may not have been applied");
            assertThat(((FenceOutcomeUnknownException) failure).token()).isEqualTo(term.token());
            assertThat(((FenceOutcomeUnknownException) failure).election()).isEqualTo(name);
        } finally {
            server.resume();
        }
    }

    @Test
    void aWriteOnAThreadTheTermDoesNotInterruptIsBoundedByTheTermToo(@Dedicated RedisServer server)
            throws Exception {
        Elector elector = leader(server, Duration.ofSeconds(1));
        Term term = elector.term().orElseThrow();
        assertThat(term.fencer().set(name + ":state", "warm-up")).isTrue();
        server.pause();
        try {
            CompletableFuture<Boolean> write =
                    onAnotherThread(() -> term.fencer().set(name + ":state", "unbound"));
            assertThat(failureOf(write, Duration.ofSeconds(1).plus(SLACK)))
                    .isInstanceOf(FenceOutcomeUnknownException.class)
                    .hasMessageContaining("no reply");
        } finally {
            server.resume();
        }
    }

    @Test
    void eachOutcomeHasItsOwnForm(@Dedicated RedisServer server) throws Exception {
        Elector elector = leader(server, Duration.ofSeconds(1));
        Term term = elector.term().orElseThrow();
        String key = name + ":report";
        assertThat(publish(term.fencer(), key)).isEqualTo("applied");
        assertThat(publish(elector.fencer(term.token() - 1), key)).isEqualTo("refused");
        server.pause();
        try {
            assertThat(onAnotherThread(() -> publish(term.fencer(), key)).get(10, TimeUnit.SECONDS))
                    .isEqualTo("unknown");
        } finally {
            server.resume();
        }
    }

    @Test
    void aWriteWithRedisStoppedEndsAsUnknown(@Dedicated RedisServer server) throws Exception {
        Elector elector = leader(server, Duration.ofSeconds(1));
        Term term = elector.term().orElseThrow();
        assertThat(term.fencer().set(name + ":state", "warm-up")).isTrue();
        server.stop();
        CompletableFuture<Boolean> write =
                onAnotherThread(() -> term.execute(() -> term.fencer().set(name + ":state", "x")));
        assertThat(failureOf(write, Duration.ofSeconds(1).plus(SLACK)))
                .isInstanceOf(FenceOutcomeUnknownException.class);
    }

    @Test
    void aReactiveWriteWithRedisFrozenEndsAsUnknownByItsTermsDeadline(
            @Dedicated RedisServer server) {
        Elector elector = leader(server, Duration.ofSeconds(1));
        Term term = elector.term().orElseThrow();
        ReactiveFencer fencer = term.reactiveFencer();
        assertThat(fencer.set(name + ":state", "warm-up").block()).isTrue();
        server.pause();
        try {
            assertThatExceptionOfType(FenceOutcomeUnknownException.class)
                    .isThrownBy(
                            () ->
                                    fencer.set(name + ":state", "frozen")
                                            .block(Duration.ofSeconds(1).plus(SLACK)));
        } finally {
            server.resume();
        }
    }

    @Test
    void aWriteAttemptedPastTheTermsDeadlineIsNotSentAndCountsAsRefused(RedisServer server) {
        // A long TTL, so that only the jump of the elector's clock puts the term past its deadline.
        Elector elector = leader(server, Duration.ofSeconds(20));
        Term term = elector.term().orElseThrow();
        Fencer fencer = term.fencer();
        ReactiveFencer reactive = term.reactiveFencer();
        assertThat(fencer.set(name + ":state", "on time")).isTrue();
        // Made on time, subscribed late on another scheduler: decided at subscription.
        Mono<Boolean> madeOnTime = reactive.set(name + ":late", "late");
        clockOffset.set(Duration.ofSeconds(21).toNanos());
        assertThat(madeOnTime.subscribeOn(Schedulers.parallel()).block()).isFalse();
        assertThat(fencer.set(name + ":late", "late")).isFalse();
        assertThat(fencer.hset(name + ":late-hash", "f", "late")).isFalse();
        assertThat(fencer.eval("redis.call('SET', KEYS[2], 'late')", List.of(name + ":late")))
                .isFalse();
        assertThat(reactive.set(name + ":late", "late").block()).isFalse();
        // A fencer for the term's token, made now or after the term ended, is the term's.
        assertThat(elector.fencer(term.token()).set(name + ":late", "late")).isFalse();
        assertThat(term.isActive()).isFalse();
        await().atMost(scaled(Duration.ofSeconds(5))).until(() -> term.endReason().isPresent());
        assertThat(elector.fencer(term.token()).set(name + ":late", "late")).isFalse();
        assertThat(elector.reactiveFencer(term.token()).set(name + ":late", "late").block())
                .isFalse();
        assertThatExceptionOfType(FenceRefusedException.class)
                .isThrownBy(() -> fencer.setOrThrow(name + ":late", "late"))
                .satisfies(refused -> assertThat(refused.token()).isEqualTo(term.token()))
                .withMessageContaining("retrying with this token cannot succeed");
        // No newer term has written: had a write been sent, the fence would have applied it.
        StringRedisTemplate redis = templates.on(server);
        assertThat(redis.hasKey(name + ":late")).isFalse();
        assertThat(redis.hasKey(name + ":late-hash")).isFalse();
        assertThat(recorder.kinds()).containsSubsequence("applied", "rejected", "rejected");
    }

    @Test
    void aPartitionRunsEvalCutShortByTheEndOfItsTermEndsAsUnknown(@Dedicated RedisServer server)
            throws Exception {
        StringRedisTemplate redis = templates.withoutClientTimeouts(server.host(), server.port());
        PartitionedElection orders =
                new PartitionedElection(
                        redis,
                        PartitionedElectionConfig.builder(name + ":orders", 1)
                                .instanceId("a")
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(200))
                                .balanceInterval(Duration.ofMillis(50))
                                .settle(Duration.ofMillis(50))
                                .build());
        Elector main = new Elector(redis, ElectorConfig.builder(name).instanceId("a").build());
        Elections elections =
                Elections.of(Map.of(Elections.DEFAULT, main), Map.of("orders", orders));
        PartitionRun run = new PartitionRun(new LeadershipContext(elections));
        try (AnnotationConfigApplicationContext context =
                new AnnotationConfigApplicationContext()) {
            context.registerBean(Elections.class, () -> elections);
            context.registerBean(
                    LeaderOnlyAnnotationBeanPostProcessor.class,
                    LeaderOnlyAnnotationBeanPostProcessor::new);
            context.registerBean(PartitionRun.class, () -> run);
            context.refresh();
            orders.start();
            await().atMost(scaled(Duration.ofSeconds(10))).until(() -> orders.owns(0));
            PartitionRun proxy = context.getBean(PartitionRun.class);
            CompletableFuture<Object> call =
                    onAnotherThread(
                            () -> {
                                proxy.record();
                                return "returned";
                            });
            run.started.await();
            server.pause();
            try {
                run.frozen.countDown();
                // The partition's term ends at its deadline while the eval waits for Redis.
                assertThat(failureOf(call, Duration.ofSeconds(1).plus(SLACK)))
                        .isInstanceOf(FenceOutcomeUnknownException.class);
            } finally {
                server.resume();
            }
        } finally {
            orders.close();
        }
    }

    /** A partition run that records itself with a fenced eval once Redis is frozen. */
    static class PartitionRun {

        final CountDownLatch started = new CountDownLatch(1);

        final CountDownLatch frozen = new CountDownLatch(1);

        private final LeadershipContext leadership;

        PartitionRun(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly(partitions = "orders")
        public void record() throws InterruptedException {
            Fencer fencer = leadership.requireFencer();
            started.countDown();
            frozen.await();
            fencer.eval(
                    "redis.call('RPUSH', KEYS[2], ARGV[2])",
                    List.of(leadership.partitions("orders").electionName(0) + ":runs"),
                    "run");
        }
    }
}
