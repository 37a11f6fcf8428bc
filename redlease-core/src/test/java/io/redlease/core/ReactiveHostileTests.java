package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Hostile probes of reactive and asynchronous {@code @LeaderOnly} work, on paths the other tests do
 * not take: stale pipelines after the same instance is elected again, nested calls, the drain,
 * sources that deliver on threads Reactor does not own, and what pool threads keep afterwards. Each
 * probe asserts the promised behaviour; one that fails shows a break.
 */
@ExtendWith(RedisExtension.class)
class ReactiveHostileTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    private AnnotationConfigApplicationContext context;

    private Elector elector;

    /** The relay's subscription, which runs until disposed. */
    private Disposable relay;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        Hooks.enableAutomaticContextPropagation();
    }

    @AfterEach
    void tearDown() {
        Hooks.disableAutomaticContextPropagation();
        if (relay != null) {
            relay.dispose();
        }
        if (context != null) {
            context.close();
        }
        electors.forEach(Elector::close);
        templates.close();
    }

    private Elector elector(String id) {
        Elector created =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .instanceId(id)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(50))
                                .build());
        electors.add(created);
        return created;
    }

    private Work start() {
        elector = elector("a");
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Elections.class, () -> Elections.of(elector));
        context.registerBean(
                LeadershipContext.class,
                () -> new LeadershipContext(context.getBean(Elections.class)));
        context.register(Infrastructure.class, Inner.class, Work.class);
        context.refresh();
        return context.getBean(Work.class);
    }

    private Term lead() {
        elector.start();
        await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
        return elector.term().orElseThrow();
    }

    /** Resigns and waits until this same instance leads again, in a newer term. */
    private Term electedAgain(Term old) {
        elector.resign();
        await().atMost(Duration.ofSeconds(10)).until(() -> !old.isActive());
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                elector.term()
                                        .filter(Term::isActive)
                                        .filter(term -> term.token() > old.token())
                                        .isPresent());
        return elector.term().orElseThrow();
    }

    @Configuration(proxyBeanMethods = false)
    static class Infrastructure {

        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }

        /** An executor whose tasks carry the caller's context, as Boot's does when asked. */
        @Bean
        ThreadPoolTaskExecutor taskExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(2);
            executor.setThreadNamePrefix("hostile-async-");
            executor.setTaskDecorator(new ContextPropagatingTaskDecorator());
            return executor;
        }
    }

    /** Leader-only methods that other leader-only work calls. */
    static class Inner {

        final LeadershipContext leadership;

        Inner(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        public Mono<String> value() {
            return Mono.just("inner");
        }

        @LeaderOnly
        public Flux<Long> ticks() {
            return Flux.interval(Duration.ofMillis(10));
        }

        @LeaderOnly
        public Mono<Boolean> write(String key) {
            return leadership.reactiveFencer().flatMap(fencer -> fencer.set(key, "nested"));
        }
    }

    static class Work {

        final LeadershipContext leadership;

        final ThreadPoolTaskExecutor executor;

        final Inner inner;

        /** Events a leader-only method publishes and a leader-only pipeline relays. */
        final Sinks.Many<String> events = Sinks.many().multicast().directBestEffort();

        /** The tokens of the fencers the relay wrote with. */
        final Queue<Long> relayTokens = new ConcurrentLinkedQueue<>();

        /**
         * What the relay's thread carried: its own frames and propagated terms, innermost first.
         */
        final Queue<String> relayThreads = new ConcurrentLinkedQueue<>();

        Work(LeadershipContext leadership, ThreadPoolTaskExecutor taskExecutor, Inner inner) {
            this.leadership = leadership;
            this.executor = taskExecutor;
            this.inner = inner;
        }

        public List<Long> relayTokens() {
            return List.copyOf(relayTokens);
        }

        public List<String> relayThreads() {
            return List.copyOf(relayThreads);
        }

        private long seen() {
            return leadership.boundTerm().map(Term::token).orElse(-1L);
        }

        /**
         * The token the operator after a source sees on its own thread, for sources that signal on
         * threads other than the subscriber's.
         */
        @LeaderOnly
        public Mono<Long> seenAfter(String source) {
            return switch (source) {
                case "interval-publishOn" ->
                        Flux.interval(Duration.ofMillis(5))
                                .take(1)
                                .publishOn(Schedulers.boundedElastic())
                                .map(tick -> seen())
                                .single();
                case "delay" -> Mono.delay(Duration.ofMillis(5)).map(tick -> seen());
                case "timeout-fallback" ->
                        Mono.<Long>never()
                                .timeout(Duration.ofMillis(5), Mono.fromCallable(this::seen));
                case "sink-from-foreign-thread" -> {
                    Sinks.One<Long> sink = Sinks.one();
                    yield sink.asMono()
                            .doOnSubscribe(
                                    s -> new Thread(() -> sink.tryEmitValue(0L), "foreign").start())
                            .map(value -> seen());
                }
                case "future-from-foreign-thread" -> {
                    CompletableFuture<Long> future = new CompletableFuture<>();
                    new Thread(
                                    () -> {
                                        // Completes the future only after the subscription.
                                        try {
                                            Thread.sleep(20);
                                        } catch (InterruptedException ex) {
                                            Thread.currentThread().interrupt();
                                        }
                                        future.complete(0L);
                                    },
                                    "foreign")
                            .start();
                    yield Mono.fromFuture(future).map(value -> seen());
                }
                case "create-from-foreign-thread" ->
                        Mono.<Long>create(
                                        sink ->
                                                new Thread(() -> sink.success(0L), "foreign")
                                                        .start())
                                .map(value -> seen());
                case "after-reactive-redis-reply" ->
                        leadership
                                .reactiveFencer()
                                .flatMap(
                                        fencer ->
                                                fencer.set(
                                                        leadership.elector().name() + ":probe",
                                                        "x"))
                                .map(applied -> seen());
                case "immediate" ->
                        Mono.just(0L).publishOn(Schedulers.immediate()).map(value -> seen());
                default -> Mono.error(new IllegalArgumentException(source));
            };
        }

        /** Relays each event through the term's fencer, and runs on after its term ends. */
        @LeaderOnly(interruptOnStepDown = false)
        public Flux<Boolean> relay(String key) {
            return events.asFlux()
                    .concatMap(
                            event ->
                                    Mono.fromCallable(
                                            () -> {
                                                Fencer fencer = leadership.fencer().orElseThrow();
                                                relayTokens.add(fencer.token());
                                                relayThreads.add(
                                                        Thread.currentThread().getName()
                                                                + " "
                                                                + BoundTerms.snapshot());
                                                return fencer.set(key, event);
                                            }));
        }

        /** Publishes an event; runs in the term of the instance that leads when it is called. */
        @LeaderOnly
        public void publish(String event) {
            events.tryEmitNext(event);
        }

        /** Waits for go, then calls another leader-only method; runs on after its term ends. */
        @LeaderOnly(interruptOnStepDown = false)
        public Mono<Boolean> thenNested(Mono<String> go, String key) {
            return go.then(Mono.defer(() -> inner.write(key)));
        }

        /** Holds its subscription until released. */
        @LeaderOnly
        public Mono<String> held(CountDownLatch started, CountDownLatch release) {
            return Mono.fromCallable(
                            () -> {
                                started.countDown();
                                release.await(10, TimeUnit.SECONDS);
                                return "held";
                            })
                    .subscribeOn(Schedulers.boundedElastic());
        }

        /** Holds its subscription without a thread, until cancelled. */
        @LeaderOnly
        public Mono<String> heldOnSink(CountDownLatch started) {
            return Mono.<String>never().doOnSubscribe(s -> started.countDown());
        }

        /**
         * Blocks a worker; cancelled, it interrupts the worker and waits for it to stop, which
         * fails the worker's step.
         */
        @LeaderOnly
        public Mono<String> stopsItsWorkerOnCancel(CountDownLatch started) {
            AtomicReference<Thread> worker = new AtomicReference<>();
            CountDownLatch stopped = new CountDownLatch(1);
            return Mono.fromCallable(
                            () -> {
                                worker.set(Thread.currentThread());
                                started.countDown();
                                new CountDownLatch(1).await();
                                return "never";
                            })
                    .subscribeOn(Schedulers.boundedElastic())
                    .doOnError(ex -> stopped.countDown())
                    .doOnCancel(
                            () -> {
                                worker.get().interrupt();
                                try {
                                    stopped.await(5, TimeUnit.SECONDS);
                                } catch (InterruptedException ex) {
                                    Thread.currentThread().interrupt();
                                }
                            });
        }

        /** Blocks on a leader-only flux that the end of the term cuts. */
        @LeaderOnly(interruptOnStepDown = false)
        public Long blocksOnTicks(CountDownLatch started) {
            // Started once the flux it blocks on runs: the end of the term then cuts the flux.
            return inner.ticks()
                    .doOnNext(tick -> started.countDown())
                    .blockLast(Duration.ofSeconds(10));
        }

        /**
         * Runs on after its term; after go, a step on the decorated executor, submitted from the
         * pipeline's operator, writes through the fencer it finds.
         */
        @LeaderOnly(interruptOnStepDown = false)
        public Mono<Long> executorFromStaleOperator(Mono<String> go, String key) {
            return go.publishOn(Schedulers.boundedElastic())
                    .flatMap(
                            v ->
                                    Mono.fromFuture(
                                            CompletableFuture.supplyAsync(
                                                    () -> {
                                                        Fencer fencer =
                                                                leadership.fencer().orElseThrow();
                                                        fencer.set(key, "late");
                                                        return fencer.token();
                                                    },
                                                    executor)));
        }

        @LeaderOnly
        public Mono<String> skipped() {
            return Mono.just("ran");
        }

        /** Holds until released, then subscribes to another leader-only method of its term. */
        @LeaderOnly
        public Mono<String> heldThenInner(CountDownLatch started, CountDownLatch release) {
            return held(started, release).then(Mono.defer(inner::value));
        }

        /** A blocking call that waits, then blocks on another leader-only method's Mono. */
        @LeaderOnly
        public String blockingThenInner(CountDownLatch started, CountDownLatch release)
                throws InterruptedException {
            started.countDown();
            release.await(10, TimeUnit.SECONDS);
            return inner.value().block(Duration.ofSeconds(10));
        }

        /** Pipelines that hop threads on the given pool, fail, and are cancelled. */
        @LeaderOnly
        public Mono<Long> hops(int i, Scheduler pool) {
            Mono<Long> hop =
                    Mono.fromCallable(this::seen)
                            .subscribeOn(pool)
                            .publishOn(pool)
                            .delayElement(Duration.ofMillis(1), pool);
            return switch (i % 5) {
                case 0 -> hop;
                case 1 ->
                        hop.map(
                                        token -> {
                                            throw new IllegalStateException("operator failed");
                                        })
                                .cast(Long.class)
                                .onErrorReturn(-9L);
                case 2 -> Flux.interval(Duration.ofMillis(1), pool).take(2).last().map(t -> seen());
                case 3 -> Mono.<Long>never().timeout(Duration.ofMillis(2), hop, pool);
                default ->
                        Flux.interval(Duration.ofMillis(1), pool)
                                .publishOn(pool)
                                .map(t -> seen())
                                .take(Duration.ofMillis(3), pool)
                                .last(-8L);
            };
        }
    }

    // The term in operators whose signals arrive on threads Reactor does not own.

    @ParameterizedTest
    @ValueSource(
            strings = {
                "interval-publishOn",
                "delay",
                "timeout-fallback",
                "sink-from-foreign-thread",
                "future-from-foreign-thread",
                "create-from-foreign-thread",
                "after-reactive-redis-reply",
                "immediate"
            })
    void anOperatorAfterAnySourceSeesTheSubscriptionsTerm(String source) {
        Work work = start();
        Term term = lead();
        StepVerifier.create(work.seenAfter(source))
                .expectNext(term.token())
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    // Stale work after the same instance is elected again.

    @Test
    void aStalePipelineDrivenFromTheNewerTermsThreadWritesWithItsOwnToken() {
        Work work = start();
        Term first = lead();
        String key = name + ":relayed";
        Queue<Boolean> verdicts = new ConcurrentLinkedQueue<>();
        relay = work.relay(key).subscribe(verdicts::add);
        Term second = electedAgain(first);
        // A leader-only call of the newer term publishes an event; the relay of the first term,
        // which runs on (interruptOnStepDown = false), handles it on the calling thread.
        work.publish("from-newer-term");
        await().atMost(Duration.ofSeconds(5)).until(() -> !verdicts.isEmpty());
        assertThat(redis.opsForValue().get(key))
                .as(
                        "value the relay of ended term %d wrote while term %d leads (fencer tokens"
                                + " %s, verdicts %s, thread and terms %s)",
                        first.token(),
                        second.token(),
                        work.relayTokens(),
                        verdicts,
                        work.relayThreads())
                .isNull();
        assertThat(work.relayTokens()).containsExactly(first.token());
    }

    @Test
    void aStalePipelinesNestedLeaderOnlyCallIsNotAdmittedIntoTheNewerTerm() {
        Work work = start();
        Term first = lead();
        String key = name + ":nested";
        Sinks.One<String> go = Sinks.one();
        AtomicReference<Object> outcome = new AtomicReference<>();
        work.thenNested(go.asMono(), key)
                .subscribe(outcome::set, outcome::set, () -> outcome.set("skipped"));
        Term second = electedAgain(first);
        go.tryEmitValue("go");
        await().atMost(Duration.ofSeconds(5)).until(() -> outcome.get() != null);
        assertThat(redis.hasKey(key))
                .as(
                        "work of ended term %d wrote through a nested leader-only call, in term %d"
                                + " (outcome %s)",
                        first.token(), second.token(), outcome.get())
                .isFalse();
    }

    @Test
    void resubscribingAfterTheTermEndedNeverRunsTheBodyOnAFollower() {
        Work work = start();
        lead();
        CountDownLatch started = new CountDownLatch(1);
        Flux<String> shared = work.heldOnSink(started).flux().share();
        AtomicReference<Throwable> cut = new AtomicReference<>();
        shared.subscribe(v -> {}, cut::set);
        Mono<String> retried = work.heldOnSink(new CountDownLatch(1)).retry();
        AtomicReference<Object> retriedOutcome = new AtomicReference<>();
        retried.subscribe(
                retriedOutcome::set, retriedOutcome::set, () -> retriedOutcome.set("empty"));
        Mono<String> cached = work.skipped().cache();
        // Another instance takes the lease: this one follows at its next renewal.
        redis.opsForValue().set(name + ":leader", "thief", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(5)).until(() -> cut.get() != null);
        assertThat(cut.get()).isInstanceOf(TermEndedException.class);
        // retry() subscribed again as a follower: SKIP completes it empty.
        await().atMost(Duration.ofSeconds(5)).until(() -> retriedOutcome.get() != null);
        assertThat(retriedOutcome.get()).isEqualTo("empty");
        // share() subscribes upstream again for a new subscriber; cache() made its first
        // subscription now: the follower's subscriptions run nothing.
        StepVerifier.create(shared).expectComplete().verify(Duration.ofSeconds(5));
        StepVerifier.create(cached).expectComplete().verify(Duration.ofSeconds(5));
        StepVerifier.create(cached).expectComplete().verify(Duration.ofSeconds(5));
    }

    @Test
    void aDecoratedTaskSubmittedFromAStaleOperatorWritesWithItsOwnToken() {
        Work work = start();
        Term first = lead();
        String key = name + ":stale-operator-task";
        Sinks.One<String> go = Sinks.one();
        AtomicReference<Object> outcome = new AtomicReference<>();
        work.executorFromStaleOperator(go.asMono(), key).subscribe(outcome::set, outcome::set);
        Term second = electedAgain(first);
        go.tryEmitValue("go");
        await().atMost(Duration.ofSeconds(5)).until(() -> outcome.get() != null);
        assertThat(redis.opsForValue().get(key))
                .as(
                        "value a task of ended term %d wrote (outcome %s) while term %d leads",
                        first.token(), outcome.get(), second.token())
                .isNull();
        assertThat(outcome.get()).isEqualTo(first.token());
    }

    // Failures when the term ends.

    @Test
    void aSubscriptionCutByItsTermFailsWithTermEndedExceptionEvenIfItsBodyFailsOnCancel()
            throws Exception {
        Work work = start();
        Term term = lead();
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            CountDownLatch started = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            // A plain blocking step on boundedElastic (odd rounds), or one whose cancel waits for
            // its worker to stop (even rounds).
            (i % 2 == 0
                            ? work.stopsItsWorkerOnCancel(started)
                            : work.held(started, new CountDownLatch(1)))
                    .subscribe(v -> {}, failure::set);
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            elector.resign();
            await().atMost(Duration.ofSeconds(5)).until(() -> failure.get() != null);
            failures.add(failure.get().getClass().getSimpleName());
            term = electedAgain(term);
        }
        assertThat(failures)
                .as("how subscriptions cut by the end of their term failed")
                .containsOnly(TermEndedException.class.getSimpleName());
    }

    @Test
    void aCallThatRanAndWasCutShortIsNotReportedAsSkipped() throws Exception {
        Work work = start();
        lead();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Object> outcome =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                Long last = work.blocksOnTicks(started);
                                return last == null ? "skipped (null)" : last;
                            } catch (RuntimeException ex) {
                                return ex;
                            }
                        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        elector.resign();
        // The method ran; the end of its term cut the flux it blocked on. Its caller must not be
        // told it was skipped (SKIP's null), as if it had not run.
        assertThat(outcome.get(10, TimeUnit.SECONDS))
                .as("what the caller of a method that ran got")
                .isInstanceOf(TermEndedException.class);
    }

    // The drain.

    @Test
    void aSkippingSubscriptionMadeDuringTheDrainCompletesEmpty() throws Exception {
        Work work = start();
        lead();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> held = work.held(started, release).toFuture();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> stopped = elector.stopAsync(Duration.ofSeconds(10));
        try {
            // Stopping admits no new work while the held subscription drains: a SKIP method is
            // skipped, as a blocking one is.
            StepVerifier.create(work.skipped()).expectComplete().verify(Duration.ofSeconds(5));
        } finally {
            release.countDown();
        }
        assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("held");
        stopped.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aSubscriptionInFlightDuringTheDrainMayStillCallLeaderOnlyMethodsOfItsTerm()
            throws Exception {
        Work work = start();
        lead();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> result = work.heldThenInner(started, release).toFuture();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> stopped = elector.stopAsync(Duration.ofSeconds(10));
        release.countDown();
        String value;
        try {
            value = result.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException ex) {
            value = "failed: " + ex.getCause();
        }
        assertThat(value)
                .as("the drained subscription's nested call of its own term")
                .isEqualTo("inner");
        stopped.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aCallInFlightDuringTheDrainMayBlockOnALeaderOnlyMonoOfItsTerm() throws Exception {
        Work work = start();
        lead();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> result =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return work.blockingThenInner(started, release);
                            } catch (InterruptedException ex) {
                                return "interrupted";
                            } catch (RuntimeException ex) {
                                return "failed: " + ex;
                            }
                        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> stopped = elector.stopAsync(Duration.ofSeconds(10));
        release.countDown();
        assertThat(result.get(10, TimeUnit.SECONDS))
                .as("the drained call's block() on a leader-only Mono of its own term")
                .isEqualTo("inner");
        stopped.get(10, TimeUnit.SECONDS);
    }

    @Test
    void stoppingWaitsForASubscriptionThatEndsWithinTheDrainAndCancelsOneThatDoesNot()
            throws Exception {
        Work work = start();
        lead();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> drained = work.held(started, release).toFuture();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> stopped = elector.stopAsync(Duration.ofSeconds(10));
        // The stop waits for the subscription in flight (a sleep opens the window in which it
        // must not have stopped).
        Thread.sleep(300);
        assertThat(stopped).isNotDone();
        assertThat(elector.isLeader()).isTrue();
        release.countDown();
        assertThat(drained.get(10, TimeUnit.SECONDS)).isEqualTo("held");
        stopped.get(10, TimeUnit.SECONDS);

        // Again, with a subscription that outlasts a short drain.
        lead();
        CountDownLatch started2 = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        work.heldOnSink(started2).subscribe(v -> {}, failure::set);
        assertThat(started2.await(10, TimeUnit.SECONDS)).isTrue();
        long begin = System.nanoTime();
        elector.stopAsync(Duration.ofMillis(300)).get(10, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - begin))
                .isGreaterThanOrEqualTo(Duration.ofMillis(250));
        await().atMost(Duration.ofSeconds(10)).until(() -> failure.get() != null);
        assertThat(failure.get()).isInstanceOf(TermEndedException.class);
    }

    // The gate and thread-locals under load.

    @Test
    void subscriptionsRacingAResignationAllEndAndLeaveNothingInTheGate() throws Exception {
        Work work = start();
        Term first = lead();
        Scheduler pool = Schedulers.newParallel("hostile-race", 4);
        try {
            List<CompletableFuture<Object>> outcomes = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                CompletableFuture<Object> outcome = new CompletableFuture<>();
                int n = i;
                work.hops(n, pool)
                        .subscribeOn(pool)
                        .subscribe(
                                outcome::complete,
                                outcome::complete,
                                () -> outcome.complete("empty"));
                outcomes.add(outcome);
                if (i == 200) {
                    elector.resign();
                }
            }
            CompletableFuture.allOf(outcomes.toArray(CompletableFuture[]::new))
                    .get(20, TimeUnit.SECONDS);
            electedAgain(first);
            // Nothing of those subscriptions is left in flight: stopping does not wait.
            long begin = System.nanoTime();
            elector.stopAsync(Duration.ofSeconds(10)).get(15, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - begin))
                    .isLessThan(Duration.ofSeconds(5));
        } finally {
            pool.dispose();
        }
    }

    @Test
    void failedCancelledAndTimedPipelinesLeaveNoTermOnAnyPoolThreadOrTheCaller() throws Exception {
        Work work = start();
        lead();
        Scheduler pool = Schedulers.newParallel("hostile-leak", 3);
        try {
            Flux.range(0, 3_000)
                    .concatMap(i -> work.hops(i, pool).onErrorReturn(-7L))
                    .blockLast(Duration.ofSeconds(60));
            // A blocking leader-only call that blocks on a leader-only Mono, on the test thread.
            context.getBean(Inner.class).value().block(Duration.ofSeconds(5));
            assertThat(BoundTerms.snapshot()).as("terms left on the calling thread").isNull();
            List<Optional<List<Term>>> left = new ArrayList<>();
            CountDownLatch asked = new CountDownLatch(12);
            for (int i = 0; i < 12; i++) {
                pool.schedule(
                        () -> {
                            synchronized (left) {
                                left.add(Optional.ofNullable(BoundTerms.snapshot()));
                            }
                            asked.countDown();
                        });
            }
            assertThat(asked.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(left).hasSize(12).allSatisfy(terms -> assertThat(terms).isEmpty());
        } finally {
            pool.dispose();
        }
    }
}
