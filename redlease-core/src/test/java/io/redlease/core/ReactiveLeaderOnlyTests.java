package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * {@code @LeaderOnly} on reactive and asynchronous methods, over real Redis: the check at each
 * subscription, the term carried through operators and tasks, cancellation when the term ends.
 */
@ExtendWith(RedisExtension.class)
class ReactiveLeaderOnlyTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    private AnnotationConfigApplicationContext context;

    private Elector elector;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        Hooks.enableAutomaticContextPropagation();
    }

    @AfterEach
    void tearDown() {
        Hooks.disableAutomaticContextPropagation();
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
        context.register(Infrastructure.class, Work.class);
        context.refresh();
        return context.getBean(Work.class);
    }

    private void lead() {
        elector.start();
        await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
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
            executor.setThreadNamePrefix("async-");
            executor.setTaskDecorator(new ContextPropagatingTaskDecorator());
            return executor;
        }
    }

    static class Work {

        final LeadershipContext leadership;

        final ThreadPoolTaskExecutor executor;

        final AtomicInteger calls = new AtomicInteger();

        final Queue<String> cancelled = new ConcurrentLinkedQueue<>();

        Work(LeadershipContext leadership, ThreadPoolTaskExecutor taskExecutor) {
            this.leadership = leadership;
            this.executor = taskExecutor;
        }

        /** How often a reactive method was called (read through the proxy). */
        public int calls() {
            return calls.get();
        }

        /** The keys of the subscriptions that were cancelled (read through the proxy). */
        public List<String> cancelled() {
            return List.copyOf(cancelled);
        }

        @LeaderOnly
        public Mono<String> mono() {
            calls.incrementAndGet();
            return Mono.just("done");
        }

        @LeaderOnly(whenNotLeader = WhenNotLeader.REJECT)
        public Flux<Integer> flux() {
            calls.incrementAndGet();
            return Flux.range(1, 3);
        }

        /** The term each operator sees, on another thread. */
        @LeaderOnly
        public Mono<Long> tokenInOperators() {
            return Mono.fromCallable(() -> leadership.boundTerm().map(Term::token).orElse(-1L))
                    .subscribeOn(Schedulers.boundedElastic())
                    .publishOn(Schedulers.parallel())
                    .map(
                            token ->
                                    token == leadership.boundTerm().map(Term::token).orElse(-2L)
                                            ? token
                                            : -3L);
        }

        /** Writes through the subscription's term until it is cancelled. */
        @LeaderOnly
        public Flux<Boolean> endless(String key) {
            return Flux.interval(Duration.ofMillis(20))
                    .onBackpressureDrop()
                    .concatMap(
                            tick ->
                                    leadership
                                            .reactiveFencer()
                                            .flatMap(
                                                    fencer -> fencer.set(key, Long.toString(tick))))
                    .doOnCancel(() -> cancelled.add(key));
        }

        /** Keeps writing through its term after the term ends. */
        @LeaderOnly(interruptOnStepDown = false)
        public Flux<Boolean> stubborn(String key, CountDownLatch ended) {
            return leadership
                    .reactiveFencer()
                    .flatMapMany(
                            fencer ->
                                    Mono.fromRunnable(
                                                    () -> {
                                                        try {
                                                            ended.await(10, TimeUnit.SECONDS);
                                                        } catch (InterruptedException ex) {
                                                            Thread.currentThread().interrupt();
                                                        }
                                                    })
                                            .subscribeOn(Schedulers.boundedElastic())
                                            .then(fencer.set(key, "late")));
        }

        /** Starts work on another thread, which sees the term it was started in. */
        @LeaderOnly
        public CompletableFuture<Long> future(CountDownLatch hold) {
            return CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            hold.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                        return leadership.boundTerm().map(Term::token).orElse(-1L);
                    },
                    executor);
        }

        @Async
        @LeaderOnly
        public CompletableFuture<Long> async() {
            return CompletableFuture.completedFuture(
                    leadership.boundTerm().map(Term::token).orElse(-1L));
        }
    }

    @Test
    void aFollowersSubscriptionNeverCallsTheMethod() {
        Work work = start();
        Mono<String> mono = work.mono();
        Flux<Integer> flux = work.flux();
        StepVerifier.create(mono).verifyComplete();
        StepVerifier.create(flux).verifyError(NotLeaderException.class);
        assertThat(work.calls()).isZero();
    }

    @Test
    void theCheckIsMadeAtEachSubscriptionNotWhenThePublisherIsAssembled() {
        Work work = start();
        // Assembled while following, subscribed while leading: the method runs, once per
        // subscription.
        Mono<String> mono = work.mono();
        Flux<Integer> flux = work.flux();
        lead();
        StepVerifier.create(mono).expectNext("done").verifyComplete();
        StepVerifier.create(mono).expectNext("done").verifyComplete();
        StepVerifier.create(flux).expectNext(1, 2, 3).verifyComplete();
        assertThat(work.calls()).isEqualTo(3);
    }

    @Test
    void everyOperatorSeesTheSubscriptionsTermOnItsOwnThread() {
        Work work = start();
        lead();
        long token = elector.token().orElseThrow();
        StepVerifier.create(work.tokenInOperators()).expectNext(token).verifyComplete();
    }

    @Test
    void theEndOfTheTermCancelsTheSubscriptionAndFailsIt() {
        Work work = start();
        lead();
        String key = name + ":ticks";
        AtomicReference<Throwable> failure = new AtomicReference<>();
        work.endless(key).subscribe(applied -> {}, failure::set);
        await().atMost(Duration.ofSeconds(10)).until(() -> redis.hasKey(key));
        elector.resign();
        await().atMost(Duration.ofSeconds(10)).until(() -> failure.get() != null);
        assertThat(failure.get()).isInstanceOf(TermEndedException.class);
        assertThat(work.cancelled()).containsExactly(key);
    }

    @Test
    void workThatOutlivesItsTermHasItsFencedWritesRefused() {
        Work work = start();
        lead();
        String key = name + ":late";
        CountDownLatch ended = new CountDownLatch(1);
        Queue<Boolean> verdicts = new ConcurrentLinkedQueue<>();
        work.stubborn(key, ended).subscribe(verdicts::add);
        long stale = elector.token().orElseThrow();
        // Another instance takes over: its election fences out the stale term.
        elector.stopAsync(Duration.ofSeconds(5));
        Elector successor = elector("b");
        successor.start();
        await().atMost(Duration.ofSeconds(10)).until(successor::isLeader);
        assertThat(successor.token().orElseThrow()).isGreaterThan(stale);
        ended.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> !verdicts.isEmpty());
        assertThat(verdicts).containsExactly(Boolean.FALSE);
        assertThat(redis.hasKey(key)).isFalse();
    }

    @Test
    void aFutureCarriesItsTermAndIsCancelledWhenTheTermEnds() throws Exception {
        Work work = start();
        lead();
        long token = elector.token().orElseThrow();
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Long> done = work.future(go);
        go.countDown();
        assertThat(done.get(10, TimeUnit.SECONDS)).isEqualTo(token);

        CompletableFuture<Long> held = work.future(new CountDownLatch(1));
        elector.resign();
        await().atMost(Duration.ofSeconds(10)).until(held::isCancelled);
    }

    @Test
    void anAsyncMethodRunsInTheTermOnItsExecutorsThread() throws Exception {
        Work work = start();
        lead();
        assertThat(work.async().get(10, TimeUnit.SECONDS)).isEqualTo(elector.token().orElseThrow());
    }

    @Test
    void tenThousandReactiveCallsLeaveNoTermOnAnyPoolThread() throws Exception {
        Work work = start();
        lead();
        Scheduler pool = Schedulers.newParallel("leak-check", 4);
        try {
            Flux.range(0, 10_000)
                    .concatMap(i -> work.tokenInOperators().publishOn(pool))
                    .blockLast(Duration.ofSeconds(60));
            // Each of the pool's threads, asked once more, carries no term.
            List<Optional<List<Term>>> left = new ArrayList<>();
            CountDownLatch asked = new CountDownLatch(16);
            for (int i = 0; i < 16; i++) {
                pool.schedule(
                        () -> {
                            synchronized (left) {
                                left.add(Optional.ofNullable(BoundTerms.snapshot()));
                            }
                            asked.countDown();
                        });
            }
            assertThat(asked.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(left).hasSize(16).allSatisfy(terms -> assertThat(terms).isEmpty());
        } finally {
            pool.dispose();
        }
    }
}
