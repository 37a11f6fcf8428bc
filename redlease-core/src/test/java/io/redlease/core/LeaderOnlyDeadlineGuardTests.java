package io.redlease.core;

import static io.redlease.test.TestTimeScale.scaled;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.annotation.LeaderOnlyRunListener;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Scope;
import org.springframework.core.Ordered;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * No {@code @LeaderOnly} method starts past its term's local deadline: the term is checked again
 * right before the method, after the run listeners and any advice ordered inside
 * {@code @LeaderOnly} (a transaction whose begin waits, a retry). The elector's clock is moved past
 * the term's deadline (TTL 30 s, so nothing else ends the term) by something that runs between the
 * interceptor's check and the method. Asynchronous advice inside {@code @LeaderOnly} is refused; a
 * reactive retry inside it resubscribes the method's publisher, which no check before the method
 * sees (documented).
 */
@ExtendWith(RedisExtension.class)
class LeaderOnlyDeadlineGuardTests {

    private static final Duration TTL = Duration.ofSeconds(30);

    static final AtomicLong CLOCK_OFFSET = new AtomicLong();

    /** How often a body started, and whether its term was active then. */
    static final AtomicInteger BODIES = new AtomicInteger();

    static final AtomicInteger BODIES_PAST_DEADLINE = new AtomicInteger();

    static final AtomicReference<String> LAST_TERM = new AtomicReference<>();

    private final Templates templates = new Templates();

    private AnnotationConfigApplicationContext context;

    private Elector elector;

    private String name;

    private RedisServer server;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
        CLOCK_OFFSET.set(0);
        BODIES.set(0);
        BODIES_PAST_DEADLINE.set(0);
    }

    @AfterEach
    void tearDown() {
        if (context != null) {
            context.close();
        }
        if (elector != null) {
            elector.close();
        }
        templates.close();
    }

    static void passTheDeadline() {
        CLOCK_OFFSET.set(TTL.plusSeconds(1).toNanos());
    }

    /** The method's first statement: records whether its term was active. */
    static void body(LeadershipContext leadership) {
        BODIES.incrementAndGet();
        Term term = leadership.term().orElseThrow();
        LAST_TERM.set(term + " endReason=" + term.endReason());
        if (!term.isActive()) {
            BODIES_PAST_DEADLINE.incrementAndGet();
        }
    }

    private void start(Class<?>... components) {
        elector =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .renewInterval(TTL.dividedBy(3))
                                .acquireInterval(Duration.ofMillis(100))
                                .clock(() -> System.nanoTime() + CLOCK_OFFSET.get())
                                .build());
        context = new AnnotationConfigApplicationContext();
        context.registerBean(
                Elections.class, () -> Elections.of(Map.of(Elections.DEFAULT, elector)));
        context.registerBean(
                LeadershipContext.class,
                () -> new LeadershipContext(context.getBean(Elections.class)));
        context.register(Infrastructure.class);
        context.register(components);
        context.refresh();
        elector.start();
        await().atMost(scaled(Duration.ofSeconds(10))).until(elector::isLeader);
    }

    @Configuration(proxyBeanMethods = false)
    static class Infrastructure {
        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }
    }

    // 1. @Transactional inside @LeaderOnly (documented order), whose begin waits past the deadline
    // (a pool that hands out its connection late, stood in for by the clock's jump).

    /** A transaction manager whose begin takes longer than the term has left. */
    static class SlowBeginTransactionManager extends AbstractPlatformTransactionManager {
        private static final long serialVersionUID = 1L;

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            passTheDeadline(); // the pool's wait for a connection outlasted the term
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {}

        @Override
        protected void doRollback(DefaultTransactionStatus status) {}
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class TransactionConfig {
        @Bean
        SlowBeginTransactionManager transactionManager() {
            return new SlowBeginTransactionManager();
        }

        @Bean
        TransactionalJob transactionalJob(LeadershipContext leadership) {
            return new TransactionalJob(leadership);
        }
    }

    static class TransactionalJob {
        private final LeadershipContext leadership;

        TransactionalJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        @Transactional
        public void run() {
            body(leadership);
        }
    }

    @Test
    void aLeaderOnlyMethodDoesNotStartPastTheDeadlineWhenItsTransactionBeginsLate() {
        start(TransactionConfig.class);
        context.getBean(TransactionalJob.class).run(); // skipped, as a call of an ended term
        assertThat(BODIES.get()).as("bodies started (last %s)", LAST_TERM.get()).isZero();
        assertThat(BODIES_PAST_DEADLINE.get())
                .as(
                        "bodies started past the term's deadline (of %s started; last %s)",
                        BODIES.get(), LAST_TERM.get())
                .isZero();
    }

    // 2. A retry inside @LeaderOnly (Spring 7's @Retryable ordered first, like spring-retry's
    // advisor or a resilience4j aspect, which auto-proxying applies before @LeaderOnly).

    static final AtomicInteger ATTEMPTS = new AtomicInteger();

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods(order = Ordered.HIGHEST_PRECEDENCE)
    static class RetryConfig {
        @Bean
        RetryingJob retryingJob(LeadershipContext leadership) {
            return new RetryingJob(leadership);
        }
    }

    static class RetryingJob {
        private final LeadershipContext leadership;

        RetryingJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly(interruptOnStepDown = false)
        @Retryable(maxRetries = 2, delay = 10)
        public void run() {
            body(leadership);
            if (ATTEMPTS.incrementAndGet() == 1) {
                passTheDeadline(); // the first attempt was slow, and failed
                throw new IllegalStateException("a transient failure");
            }
        }
    }

    @Test
    void aRetryInsideLeaderOnlyDoesNotStartTheMethodAgainPastTheDeadline() {
        ATTEMPTS.set(0);
        start(RetryConfig.class);
        try {
            context.getBean(RetryingJob.class).run();
        } catch (RuntimeException ex) {
            // the retry gives up on its refused attempts; what matters is the bodies
        }
        assertThat(BODIES.get()).as("bodies started (last %s)", LAST_TERM.get()).isOne();
        assertThat(BODIES_PAST_DEADLINE.get())
                .as(
                        "bodies started past the term's deadline (of %s started; last %s)",
                        BODIES.get(), LAST_TERM.get())
                .isZero();
    }

    // 3. A LeaderOnlyRunListener (an observation handler, a tracer) that is slow before it
    // proceeds.

    @Configuration(proxyBeanMethods = false)
    static class ListenerConfig {
        @Bean
        LeaderOnlyRunListener slowListener() {
            return new LeaderOnlyRunListener() {
                @Override
                public @Nullable Object around(
                        LeaderOnlyRun run, Callable<@Nullable Object> proceed) throws Exception {
                    passTheDeadline(); // e.g. a span exporter that blocked
                    return proceed.call();
                }
            };
        }

        @Bean
        PlainJob plainJob(LeadershipContext leadership) {
            return new PlainJob(leadership);
        }
    }

    static class PlainJob {
        private final LeadershipContext leadership;

        PlainJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        public void run() {
            body(leadership);
        }
    }

    @Test
    void aLeaderOnlyMethodDoesNotStartPastTheDeadlineWhenARunListenerIsSlow() {
        start(ListenerConfig.class);
        context.getBean(PlainJob.class).run(); // skipped, as a call of an ended term
        assertThat(BODIES.get()).as("bodies started (last %s)", LAST_TERM.get()).isZero();
        assertThat(BODIES_PAST_DEADLINE.get())
                .as(
                        "bodies started past the term's deadline (of %s started; last %s)",
                        BODIES.get(), LAST_TERM.get())
                .isZero();
    }

    // 4. @Async ordered inside @LeaderOnly (@EnableAsync(order = ...) before redlease's
    // post-processor): the check would run on the caller's thread, the body later on the
    // executor's, with no term bound. Refused at startup; with @Async's default order (outside),
    // the check runs on the executor's thread.

    @Configuration(proxyBeanMethods = false)
    @EnableAsync(order = Ordered.HIGHEST_PRECEDENCE)
    static class AsyncInsideConfig {
        @Bean
        AsyncJob asyncJob(LeadershipContext leadership) {
            return new AsyncJob(leadership);
        }
    }

    static class AsyncJob {
        private final LeadershipContext leadership;

        AsyncJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        @Async
        public CompletableFuture<Boolean> run() {
            body(leadership);
            return CompletableFuture.completedFuture(
                    leadership.term().map(Term::isActive).orElse(false));
        }
    }

    @Test
    void asyncAdviceOrderedInsideLeaderOnlyIsRefusedAtStartup() {
        assertThatThrownBy(() -> start(AsyncInsideConfig.class))
                .isInstanceOf(BeanCreationException.class)
                .hasMessageContaining("'asyncJob'")
                .hasMessageContaining("AsyncJob.run()")
                .hasMessageContaining("asynchronous advice ordered inside @LeaderOnly")
                .hasMessageContaining("put @Async outside @LeaderOnly");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncOutsideConfig {
        @Bean
        AsyncJob asyncJob(LeadershipContext leadership) {
            return new AsyncJob(leadership);
        }
    }

    @Test
    void asyncAdviceWithItsDefaultOrderRunsTheCheckOnTheExecutorsThread() throws Exception {
        start(AsyncOutsideConfig.class);
        assertThat(
                        context.getBean(AsyncJob.class)
                                .run()
                                .get(scaled(Duration.ofSeconds(10)).toMillis(), MILLISECONDS))
                .isTrue();
        passTheDeadline();
        // Past the deadline the executor's call is skipped: the body does not start.
        assertThat(
                        context.getBean(AsyncJob.class)
                                .run()
                                .get(scaled(Duration.ofSeconds(10)).toMillis(), MILLISECONDS))
                .isNull();
        assertThat(BODIES.get()).isOne();
        assertThat(BODIES_PAST_DEADLINE.get()).isZero();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync(order = Ordered.HIGHEST_PRECEDENCE)
    static class LateAsyncInsideConfig {
        @Bean
        @Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
        AsyncJob asyncJob(LeadershipContext leadership) {
            return new AsyncJob(leadership);
        }
    }

    @Test
    void asyncAdviceInsideLeaderOnlyOnABeanCreatedAfterStartupIsRefusedAtItsCall() {
        start(LateAsyncInsideConfig.class);
        assertThatThrownBy(() -> context.getBean(AsyncJob.class).run())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("AsyncJob.run()")
                .hasMessageContaining("asynchronous advice ordered inside @LeaderOnly");
        assertThat(BODIES.get()).isZero();
    }

    @Configuration(proxyBeanMethods = false)
    static class LateListenerConfig {
        @Bean
        LeaderOnlyRunListener slowListener() {
            return new LeaderOnlyRunListener() {
                @Override
                public @Nullable Object around(
                        LeaderOnlyRun run, Callable<@Nullable Object> proceed) throws Exception {
                    passTheDeadline();
                    return proceed.call();
                }
            };
        }

        @Bean
        @Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
        PlainJob plainJob(LeadershipContext leadership) {
            return new PlainJob(leadership);
        }
    }

    @Test
    void aMethodOfABeanCreatedAfterStartupDoesNotStartPastTheDeadlineEither() {
        start(LateListenerConfig.class);
        context.getBean(PlainJob.class).run();
        assertThat(BODIES.get()).as("bodies started (last %s)", LAST_TERM.get()).isZero();
    }

    // 5. Reactive: a Mono of a @LeaderOnly method resubscribed by the caller (retry), and one
    // resubscribed by a reactive retry inside @LeaderOnly.

    static volatile Term FIRST_TERM;

    static final AtomicInteger REACTIVE_ATTEMPTS = new AtomicInteger();

    static reactor.core.publisher.Mono<String> reactiveBody() {
        return reactor.core.publisher.Mono.defer(
                () -> {
                    int attempt = REACTIVE_ATTEMPTS.incrementAndGet();
                    BODIES.incrementAndGet();
                    if (!FIRST_TERM.isActive()) {
                        BODIES_PAST_DEADLINE.incrementAndGet();
                        LAST_TERM.set("attempt " + attempt + " in " + FIRST_TERM);
                    }
                    if (attempt == 1) {
                        passTheDeadline();
                        return reactor.core.publisher.Mono.error(
                                new IllegalStateException("a transient failure"));
                    }
                    return reactor.core.publisher.Mono.just("done");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class ReactiveConfig {
        @Bean
        ReactiveJob reactiveJob() {
            return new ReactiveJob();
        }
    }

    static class ReactiveJob {
        @LeaderOnly(interruptOnStepDown = false)
        public reactor.core.publisher.Mono<String> run() {
            return reactiveBody();
        }
    }

    @Test
    void aLeaderOnlyMonoResubscribedByTheCallerPastTheDeadlineDoesNotRunAgain() {
        REACTIVE_ATTEMPTS.set(0);
        start(ReactiveConfig.class);
        FIRST_TERM = elector.term().orElseThrow();
        // The resubscription is a new call, refused past the deadline: skipped, empty.
        assertThat(
                        context.getBean(ReactiveJob.class)
                                .run()
                                .retry(1)
                                .block(scaled(Duration.ofSeconds(10))))
                .isNull();
        assertThat(REACTIVE_ATTEMPTS.get()).isOne();
        assertThat(BODIES_PAST_DEADLINE.get())
                .as(
                        "bodies started past the term's deadline (of %s started; last %s)",
                        BODIES.get(), LAST_TERM.get())
                .isZero();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods(order = Ordered.HIGHEST_PRECEDENCE)
    static class ReactiveRetryConfig {
        @Bean
        ReactiveRetryingJob reactiveRetryingJob() {
            return new ReactiveRetryingJob();
        }
    }

    static class ReactiveRetryingJob {
        @LeaderOnly(interruptOnStepDown = false)
        @Retryable(maxRetries = 1, delay = 10)
        public reactor.core.publisher.Mono<String> run() {
            return reactiveBody();
        }
    }

    /**
     * Documented: a reactive retry inside {@code @LeaderOnly} resubscribes the publisher the method
     * returned, inside the subscription the term admitted; no check before the method sees it (the
     * method is not called again), so the work runs again even past the deadline.
     */
    @Test
    void aReactiveRetryInsideLeaderOnlyResubscribesTheMethodsPublisherPastTheDeadline() {
        REACTIVE_ATTEMPTS.set(0);
        start(ReactiveRetryConfig.class);
        FIRST_TERM = elector.term().orElseThrow();
        assertThat(
                        context.getBean(ReactiveRetryingJob.class)
                                .run()
                                .block(scaled(Duration.ofSeconds(10))))
                .isEqualTo("done");
        assertThat(REACTIVE_ATTEMPTS.get()).isEqualTo(2);
        assertThat(BODIES_PAST_DEADLINE.get()).isOne();
    }

    // 6. The same retry with the default interruptOnStepDown = true, the first attempt ending the
    // term (past its deadline, the watchdog ends it and interrupts the thread) before it fails.

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods(order = Ordered.HIGHEST_PRECEDENCE)
    static class InterruptedRetryConfig {
        @Bean
        InterruptedRetryingJob interruptedRetryingJob(LeadershipContext leadership) {
            return new InterruptedRetryingJob(leadership);
        }
    }

    static class InterruptedRetryingJob {
        private final LeadershipContext leadership;

        InterruptedRetryingJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        @Retryable(maxRetries = 2, delay = 10)
        public void run() {
            body(leadership);
            if (ATTEMPTS.incrementAndGet() == 1) {
                passTheDeadline();
                Term term = leadership.term().orElseThrow();
                term.isActive(); // has the watchdog end it now
                await().atMost(scaled(Duration.ofSeconds(10)))
                        .until(() -> term.endReason().isPresent());
                throw new IllegalStateException(
                        "a failure as the term ended; interrupted: "
                                + Thread.currentThread().isInterrupted());
            }
        }
    }

    @Test
    void aRetryInsideLeaderOnlyAfterTheTermEndedWithTheDefaultInterrupt() {
        ATTEMPTS.set(0);
        start(InterruptedRetryConfig.class);
        try {
            context.getBean(InterruptedRetryingJob.class).run();
        } catch (RuntimeException ex) {
            // the retry gives up on its refused attempts; what matters is the bodies
        }
        assertThat(BODIES.get()).as("bodies started (last %s)", LAST_TERM.get()).isOne();
        assertThat(BODIES_PAST_DEADLINE.get())
                .as(
                        "bodies started past the term's deadline (of %s started; last %s)",
                        BODIES.get(), LAST_TERM.get())
                .isZero();
    }
}
