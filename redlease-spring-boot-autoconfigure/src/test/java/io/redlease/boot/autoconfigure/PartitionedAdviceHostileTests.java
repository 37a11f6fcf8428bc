package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.framework.AbstractAdvisingBeanPostProcessor;
import org.springframework.aop.interceptor.AsyncUncaughtExceptionHandler;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.AsyncConfigurer;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A hostile review of {@code @LeaderOnly(partitions)} and {@code @LeaderOnly(partitions,
 * oncePerSlot = true)} behind other Spring machinery: an {@code @Around} aspect that hands the call
 * to another thread, answers without calling it or retries it after its partition's term ended;
 * advice a later post-processor adds inside redlease's; asynchronous advice however it is selected;
 * lazy beans created after the startup checks; JDK and CGLIB proxies; {@code @Transactional}; jobs
 * on interface default methods and inherited methods; a {@code SchedulingConfigurer}'s own task.
 *
 * <p>Tests named {@code holds...} show a guarantee that held under the attack; the others were
 * defects the review found, each fixed, and check the behaviour now in place.
 */
@ExtendWith(RedisExtension.class)
class PartitionedAdviceHostileTests {

    private ApplicationContextRunner contextRunner;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        String name =
                "redlease-partitions-advice:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderOnlyAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name={" + name + "}",
                                "redlease.ttl=2s",
                                "redlease.instance-id=a",
                                "redlease.auto-startup=true",
                                "redlease.partitions.orders.balance-interval=50ms",
                                "redlease.partitions.orders.settle=50ms");
    }

    private static PartitionedElection ownAll(ApplicationContext context, int count) {
        PartitionedElection orders = context.getBean(Elections.class).partitioned("orders");
        Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> orders.owned().size() == count && main.isLeader());
        return orders;
    }

    /**
     * An aspect in front of a partitioned method runs it in a {@code CompletableFuture} and waits.
     * Each partition's run then ran on a pool thread without its partition's term: {@code
     * partition()} was empty and {@code fencer()} answered with the main election's fencer, so the
     * run's writes would have been fenced against the wrong election. Now the method is refused
     * where it is entered without a partition term, and the call fails naming it.
     */
    @Test
    void aRunAdviceHandsToAnotherThreadDoesNotRunWithoutItsPartitionsTerm() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(Advised.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            Recorder recorder = context.getBean(Recorder.class);
                            Throwable thrown =
                                    catchThrowable(() -> context.getBean(ElsewhereJob.class).run());
                            assertThat(recorder.seen)
                                    .as("runs without a partition term")
                                    .allSatisfy(seen -> assertThat(seen.partition()).isPresent());
                            assertThat(thrown)
                                    .hasStackTraceContaining("ElsewhereJob.run()")
                                    .hasStackTraceContaining("works for no partition");
                        });
    }

    /**
     * An aspect that retries a failed call: the first run resigns its partition (the term ends and
     * interrupts it), fails, and the aspect calls the method again. The retry used to run the body
     * again inside the ended term, for a partition this instance no longer held. Now it is refused.
     */
    @Test
    void aRetryByAdviceAfterThePartitionsTermEndedDoesNotRunTheMethodAgain() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=1")
                .withUserConfiguration(Advised.class)
                .run(
                        context -> {
                            ownAll(context, 1);
                            RetriedJob job = context.getBean(RetriedJob.class);
                            Throwable thrown = catchThrowable(job::run);
                            assertThat(job.retried())
                                    .as("bodies run again after the partition's term ended")
                                    .isEmpty();
                            assertThat(job.attempts()).isEqualTo(1);
                            assertThat(thrown).hasStackTraceContaining("has ended");
                        });
    }

    /**
     * {@code @Async} that the startup check did not see: on the bean's class while the partitioned
     * method is inherited from a superclass, or selected by another annotation ({@code
     * EnableAsync(annotation = ...)}). Either way each call was handed to an executor, so calls of
     * consecutive ticks ran the same partitions at once. Both are now refused at startup, naming
     * the method, like {@code @Async} on the method itself.
     */
    @Test
    void asynchronousAdviceOnAPartitionedMethodIsRefusedHoweverItIsSelected() {
        for (Class<?> configuration : List.of(AsyncSubclass.class, CustomAsync.class)) {
            contextRunner
                    .withPropertyValues("redlease.partitions.orders.count=2")
                    .withUserConfiguration(configuration)
                    .run(
                            context ->
                                    assertThat(context)
                                            .as(configuration.getSimpleName())
                                            .getFailure()
                                            .hasStackTraceContaining("handed to another thread")
                                            .hasStackTraceContaining("run()"));
        }
    }

    /**
     * The same hand-off through a JDK interface proxy: the method the advice chain calls is the
     * interface's, the annotation the implementation's; it is refused alike.
     */
    @Test
    void aRunAdviceHandsToAnotherThreadIsRefusedThroughAJdkProxyToo() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(AdvisedInterface.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            Recorder recorder = context.getBean(Recorder.class);
                            Settling job = context.getBean(Settling.class);
                            assertThat(job).isNotInstanceOf(SettlingJob.class);
                            Throwable thrown = catchThrowable(job::settle);
                            assertThat(recorder.seen).isEmpty();
                            assertThat(thrown)
                                    .hasStackTraceContaining("settle()")
                                    .hasStackTraceContaining("works for no partition");
                        });
    }

    /**
     * Once-per-slot partitioned jobs behind advice that runs the method on another thread, or
     * answers without calling it: no partition's slot is ever marked and the first body never runs
     * (the run's own check refuses the call made elsewhere), however many slots come due.
     */
    @Test
    void holdsOncePerSlotRunsThatAdviceHandsElsewhereOrAnswersAreNeverMarked() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(AdvisedSlots.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            SlotJobs jobs = context.getBean(SlotJobs.class);
                            Map<String, AtomicInteger> failed = new ConcurrentHashMap<>();
                            jobs.addListener(
                                    (job, slot, result, count) -> {
                                        if (result == SlotJobs.Result.FAILED) {
                                            failed.computeIfAbsent(job, id -> new AtomicInteger())
                                                    .incrementAndGet();
                                        }
                                    });
                            await().atMost(Duration.ofSeconds(10))
                                    .until(
                                            () ->
                                                    failed.size() == 2
                                                            && failed.values().stream()
                                                                    .allMatch(n -> n.get() >= 4));
                            assertThat(context.getBean(ElsewhereSlotJob.class).runs()).isZero();
                            assertThat(jobs.jobs())
                                    .hasSize(4)
                                    .allSatisfy(
                                            view -> assertThat(view.lastCompletedSlot()).isNull());
                        });
    }

    /**
     * {@code @Scheduled} and {@code @LeaderOnly(partitions, oncePerSlot)} on an interface's default
     * method (behind a JDK proxy), or on a method the bean inherits from its superclass: Spring
     * schedules it, redlease recognises it, and each partition marks its slots with the partition's
     * term and slot bound.
     */
    @Test
    void holdsAOncePerSlotJobOnADefaultOrInheritedMethodRunsPerPartition() {
        slotsRunPerPartition(
                DefaultMethodSlots.class, context -> context.getBean(SeenSlots.class).seen());
        slotsRunPerPartition(
                InheritedSlots.class, context -> context.getBean(InheritedJob.class).seen());
    }

    private void slotsRunPerPartition(
            Class<?> configuration, Function<ApplicationContext, List<SlotSeen>> runs) {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(configuration)
                .run(
                        context -> {
                            ownAll(context, 2);
                            SlotJobs jobs = context.getBean(SlotJobs.class);
                            await().atMost(Duration.ofSeconds(10))
                                    .until(
                                            () ->
                                                    jobs.jobs().size() == 2
                                                            && jobs.jobs().stream()
                                                                    .allMatch(
                                                                            view ->
                                                                                    view
                                                                                                    .lastCompletedSlot()
                                                                                            != null));
                            assertThat(runs.apply(context))
                                    .as(configuration.getSimpleName())
                                    .allSatisfy(
                                            seen -> {
                                                assertThat(seen.partition()).isPresent();
                                                assertThat(seen.slot()).isTrue();
                                            })
                                    .extracting(seen -> seen.partition().getAsInt())
                                    .contains(0, 1);
                        });
    }

    /**
     * Advice that another post-processor adds after redlease's, at the end of the bean's advice (an
     * {@code AbstractAdvisingBeanPostProcessor} not before existing advisors), and that runs the
     * method on another thread. It used to sit inside the partition check, so the body ran without
     * its partition's term; the check now moves innermost once every singleton exists.
     */
    @Test
    void aHandOffAddedByALaterPostProcessorDoesNotRunWithoutItsPartitionsTerm() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(LaterHandOff.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            Recorder recorder = context.getBean(Recorder.class);
                            Throwable thrown =
                                    catchThrowable(() -> context.getBean(HandedOffJob.class).run());
                            assertThat(recorder.seen)
                                    .as("runs without a partition term")
                                    .allSatisfy(seen -> assertThat(seen.partition()).isPresent());
                            assertThat(thrown).hasStackTraceContaining("works for no partition");
                        });
    }

    /**
     * {@code @Transactional} on a partitioned method: each partition's run has a transaction of its
     * own, opened inside the partition's term (redlease's advice is outermost).
     */
    @Test
    void holdsTransactionalPartitionedMethodRunsEachPartitionInItsOwnTransaction() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=3")
                .withUserConfiguration(Transactions.class)
                .run(
                        context -> {
                            ownAll(context, 3);
                            TransactionalJob job = context.getBean(TransactionalJob.class);
                            job.run();
                            assertThat(job.seen())
                                    .hasSize(3)
                                    .allSatisfy(
                                            seen -> {
                                                assertThat(seen.partition()).isPresent();
                                                assertThat(seen.transaction()).isNotNull();
                                            });
                            assertThat(job.seen())
                                    .extracting(seen -> seen.partition().getAsInt())
                                    .containsExactly(0, 1, 2);
                            assertThat(
                                            job.seen().stream()
                                                    .map(
                                                            seen ->
                                                                    System.identityHashCode(
                                                                            seen.transaction()))
                                                    .distinct())
                                    .hasSize(3);
                        });
    }

    /**
     * A {@code SchedulingConfigurer} that registers a task of its own calling a once-per-slot
     * partitioned method through the bean: each of its calls is refused in every partition (the
     * method runs only as one of its slots), while the job's own schedule runs and marks its slots.
     */
    @Test
    void holdsATaskOfASchedulingConfigurerCannotRunAOncePerSlotPartitionedMethod() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(ConfigurerSlots.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            SlotJobs jobs = context.getBean(SlotJobs.class);
                            OwnTask task = context.getBean(OwnTask.class);
                            await().atMost(Duration.ofSeconds(10))
                                    .until(
                                            () ->
                                                    task.refused.size() >= 2
                                                            && jobs.jobs().size() == 2
                                                            && jobs.jobs().stream()
                                                                    .allMatch(
                                                                            view ->
                                                                                    view
                                                                                                    .lastCompletedSlot()
                                                                                            != null));
                            assertThat(task.refused)
                                    .allSatisfy(
                                            ex ->
                                                    assertThat(ex)
                                                            .hasMessageContaining(
                                                                    "runs only as one of its"
                                                                            + " slots"));
                            assertThat(context.getBean(InheritedJob.class).seen())
                                    .isNotEmpty()
                                    .allSatisfy(seen -> assertThat(seen.slot()).isTrue());
                        });
    }

    static class OwnTask implements SchedulingConfigurer {

        final List<RuntimeException> refused = new CopyOnWriteArrayList<>();

        private final ObjectProvider<InheritedJob> job;

        OwnTask(ObjectProvider<InheritedJob> job) {
            this.job = job;
        }

        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            registrar.addFixedDelayTask(
                    () -> {
                        try {
                            job.getObject().run();
                        } catch (RuntimeException ex) {
                            refused.add(ex);
                        }
                    },
                    Duration.ofMillis(50));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class ConfigurerSlots {

        @Bean
        InheritedJob inheritedJob() {
            return new InheritedJob();
        }

        @Bean
        OwnTask ownTask(ObjectProvider<InheritedJob> job) {
            return new OwnTask(job);
        }
    }

    /**
     * The same two attacks on {@code @Lazy} beans, created after the startup checks: asynchronous
     * advice selected by another annotation, and a hand-off that a later post-processor adds inside
     * the partition check. Neither could be seen at startup; the first call is refused instead,
     * naming the method, and the body never runs outside its partition's term.
     */
    @Test
    void lazyBeansWithAsynchronousOrLaterHandOffAdviceAreRefusedAtTheirFirstCall() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(LazyBeans.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            Recorder recorder = context.getBean(Recorder.class);
                            Throwable handedOff =
                                    catchThrowable(() -> context.getBean(HandedOffJob.class).run());
                            assertThat(recorder.seen)
                                    .as("runs without a partition term")
                                    .allSatisfy(seen -> assertThat(seen.partition()).isPresent());
                            assertThat(handedOff).hasStackTraceContaining("works for no partition");
                            // The asynchronous advice runs the call on its executor, whose
                            // handler hears of the refusal.
                            context.getBean(RecordingAsyncJob.class).run();
                            AsyncFailures failures = context.getBean(AsyncFailures.class);
                            await().atMost(Duration.ofSeconds(10))
                                    .until(() -> !failures.failures.isEmpty());
                            assertThat(failures.failures.get(0))
                                    .hasMessageContaining("asynchronous advice")
                                    .hasMessageContaining("run()");
                            assertThat(recorder.seen).isEmpty();
                        });
    }

    static class AsyncFailures implements AsyncConfigurer {

        final List<Throwable> failures = new CopyOnWriteArrayList<>();

        @Override
        public AsyncUncaughtExceptionHandler getAsyncUncaughtExceptionHandler() {
            return (ex, method, arguments) -> failures.add(ex);
        }
    }

    static class RecordingAsyncJob {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        RecordingAsyncJob(LeadershipContext leadership, Recorder recorder) {
            this.leadership = leadership;
            this.recorder = recorder;
        }

        @InBackground
        @LeaderOnly(partitions = "orders")
        public void run() {
            recorder.record(leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync(annotation = InBackground.class)
    static class LazyBeans {

        @Bean
        static HandOffPostProcessor handOffPostProcessor() {
            return new HandOffPostProcessor();
        }

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        @Lazy
        HandedOffJob handedOffJob(LeadershipContext leadership, Recorder recorder) {
            return new HandedOffJob(leadership, recorder);
        }

        @Bean
        AsyncFailures asyncFailures() {
            return new AsyncFailures();
        }

        @Bean
        @Lazy
        RecordingAsyncJob recordingAsyncJob(LeadershipContext leadership, Recorder recorder) {
            return new RecordingAsyncJob(leadership, recorder);
        }
    }

    /**
     * An aspect that hands each partition's run to an executor that propagates the context (so the
     * partition's term is bound there too) and returns without waiting. The partition check used to
     * pass there: the bodies ran after the call returned, overlapping the next runs, on threads the
     * end of the term does not interrupt. The check now also requires the thread to be the one
     * making the partition's run, so each handed-off call is refused.
     */
    @Test
    void aRunAdviceHandsToAPropagatingExecutorWithoutWaitingIsNotLetThrough() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(AdvisedPropagating.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            FireAndForgetJob job = context.getBean(FireAndForgetJob.class);
                            HostileAspect aspect = context.getBean(HostileAspect.class);
                            try {
                                job.run();
                                await().atMost(Duration.ofSeconds(10))
                                        .until(() -> job.entered() + aspect.refused.size() == 2);
                                assertThat(job.entered())
                                        .as("runs entered on another thread, after the call")
                                        .isZero();
                                assertThat(aspect.refused)
                                        .allSatisfy(
                                                ex ->
                                                        assertThat(ex)
                                                                .hasMessageContaining(
                                                                        "works for no partition"
                                                                                + " run"));
                            } finally {
                                job.release();
                            }
                        });
    }

    static class FireAndForgetJob {

        private final AtomicInteger running = new AtomicInteger();

        private final AtomicInteger entered = new AtomicInteger();

        private final CountDownLatch release = new CountDownLatch(1);

        @Hostile(Mode.PROPAGATED_NO_WAIT)
        @LeaderOnly(partitions = "orders")
        public void run() {
            entered.incrementAndGet();
            running.incrementAndGet();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            } finally {
                running.decrementAndGet();
            }
        }

        public int running() {
            return running.get();
        }

        public int entered() {
            return entered.get();
        }

        public void release() {
            release.countDown();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy(proxyTargetClass = true)
    static class AdvisedPropagating {

        @Bean
        HostileAspect hostileAspect() {
            return new HostileAspect();
        }

        @Bean
        FireAndForgetJob fireAndForgetJob() {
            return new FireAndForgetJob();
        }
    }

    // ---------------------------------------------------------------------------------------

    record InTransaction(OptionalInt partition, Object transaction) {}

    static class TransactionalJob {

        private final LeadershipContext leadership;

        private final DataSource dataSource;

        private final List<InTransaction> seen = new CopyOnWriteArrayList<>();

        TransactionalJob(LeadershipContext leadership, DataSource dataSource) {
            this.leadership = leadership;
            this.dataSource = dataSource;
        }

        @Transactional
        @LeaderOnly(partitions = "orders")
        public void run() {
            seen.add(
                    new InTransaction(
                            leadership.partition(),
                            TransactionSynchronizationManager.isActualTransactionActive()
                                    ? TransactionSynchronizationManager.getResource(dataSource)
                                    : null));
        }

        public List<InTransaction> seen() {
            return seen;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Transactions {

        @Bean
        DataSource dataSource() {
            JdbcDataSource dataSource = new JdbcDataSource();
            dataSource.setURL("jdbc:h2:mem:advice" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
            return dataSource;
        }

        @Bean
        DataSourceTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        TransactionalJob transactionalJob(LeadershipContext leadership, DataSource dataSource) {
            return new TransactionalJob(leadership, dataSource);
        }
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @interface HandOff {}

    /** Runs {@code @HandOff} methods on a pool thread, innermost among the advice it adds to. */
    static class HandOffPostProcessor extends AbstractAdvisingBeanPostProcessor {

        private static final long serialVersionUID = 1L;

        HandOffPostProcessor() {
            MethodInterceptor handOff =
                    invocation -> {
                        try {
                            return CompletableFuture.supplyAsync(
                                            () -> {
                                                try {
                                                    return invocation.proceed();
                                                } catch (RuntimeException ex) {
                                                    throw ex;
                                                } catch (Throwable ex) {
                                                    throw new CompletionException(ex);
                                                }
                                            })
                                    .join();
                        } catch (CompletionException ex) {
                            throw ex.getCause();
                        }
                    };
            this.advisor =
                    new DefaultPointcutAdvisor(
                            new AnnotationMatchingPointcut(null, HandOff.class, true), handOff);
        }
    }

    static class HandedOffJob {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        HandedOffJob(LeadershipContext leadership, Recorder recorder) {
            this.leadership = leadership;
            this.recorder = recorder;
        }

        @HandOff
        @LeaderOnly(partitions = "orders")
        public void run() {
            recorder.record(leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LaterHandOff {

        @Bean
        static HandOffPostProcessor handOffPostProcessor() {
            return new HandOffPostProcessor();
        }

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        HandedOffJob handedOffJob(LeadershipContext leadership, Recorder recorder) {
            return new HandedOffJob(leadership, recorder);
        }
    }

    interface Settling {

        void settle();
    }

    static class SettlingJob implements Settling {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        SettlingJob(LeadershipContext leadership, Recorder recorder) {
            this.leadership = leadership;
            this.recorder = recorder;
        }

        @Override
        @Hostile(Mode.ELSEWHERE)
        @LeaderOnly(partitions = "orders")
        public void settle() {
            recorder.record(leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy(proxyTargetClass = false)
    static class AdvisedInterface {

        @Bean
        HostileAspect hostileAspect() {
            return new HostileAspect();
        }

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        Settling settlingJob(LeadershipContext leadership, Recorder recorder) {
            return new SettlingJob(leadership, recorder);
        }
    }

    static class NeverSlotJob {

        @Hostile(Mode.NEVER)
        @Scheduled(fixedRate = 50)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {}
    }

    static class ElsewhereSlotJob {

        private final AtomicInteger runs = new AtomicInteger();

        @Hostile(Mode.ELSEWHERE)
        @Scheduled(fixedRate = 50)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {
            runs.incrementAndGet();
        }

        public int runs() {
            return runs.get();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy(proxyTargetClass = true)
    @EnableScheduling
    static class AdvisedSlots {

        @Bean
        HostileAspect hostileAspect() {
            return new HostileAspect();
        }

        @Bean
        ElsewhereSlotJob elsewhereSlotJob() {
            return new ElsewhereSlotJob();
        }

        @Bean
        NeverSlotJob neverSlotJob() {
            return new NeverSlotJob();
        }
    }

    record SlotSeen(OptionalInt partition, boolean slot) {}

    interface SeenSlots {

        List<SlotSeen> seen();
    }

    interface DefaultMethodJobs extends SeenSlots {

        LeadershipContext leadership();

        @Scheduled(fixedRate = 50)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        default void run() {
            seen().add(new SlotSeen(leadership().partition(), leadership().slot().isPresent()));
        }
    }

    static class SlotBase {

        @Autowired LeadershipContext leadership;

        private final List<SlotSeen> seen = new CopyOnWriteArrayList<>();

        @Scheduled(fixedRate = 50)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void run() {
            seen.add(new SlotSeen(leadership.partition(), leadership.slot().isPresent()));
        }

        public List<SlotSeen> seen() {
            return seen;
        }
    }

    static class InheritedJob extends SlotBase {}

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class InheritedSlots {

        @Bean
        InheritedJob inheritedJob() {
            return new InheritedJob();
        }
    }

    static class DefaultMethodJob implements DefaultMethodJobs {

        private final LeadershipContext leadership;

        private final List<SlotSeen> seen = new CopyOnWriteArrayList<>();

        DefaultMethodJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Override
        public LeadershipContext leadership() {
            return leadership;
        }

        @Override
        public List<SlotSeen> seen() {
            return seen;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class DefaultMethodSlots {

        @Bean
        DefaultMethodJob defaultMethodJob(LeadershipContext leadership) {
            return new DefaultMethodJob(leadership);
        }
    }

    static class PartitionedBase {

        @LeaderOnly(partitions = "orders")
        public void run() {}
    }

    @Async
    static class AsyncPartitioned extends PartitionedBase {}

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class AsyncSubclass {

        @Bean
        AsyncPartitioned asyncPartitioned() {
            return new AsyncPartitioned();
        }
    }

    @Target({ElementType.METHOD, ElementType.TYPE})
    @Retention(RetentionPolicy.RUNTIME)
    @interface InBackground {}

    static class CustomAsyncJob {

        @InBackground
        @LeaderOnly(partitions = "orders")
        public void run() {}
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync(annotation = InBackground.class)
    static class CustomAsync {

        @Bean
        CustomAsyncJob customAsyncJob() {
            return new CustomAsyncJob();
        }
    }

    enum Mode {
        ELSEWHERE,
        RETRY,
        NEVER,
        PROPAGATED_NO_WAIT
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @interface Hostile {
        Mode value();
    }

    /** User advice in front of the method, as an application might write it. */
    @Aspect
    @Order(Ordered.HIGHEST_PRECEDENCE)
    static class HostileAspect {

        /** Carries the calling thread's context (the partition's term) to its threads. */
        private final SimpleAsyncTaskExecutor propagating = new SimpleAsyncTaskExecutor("handed-");

        final List<RuntimeException> refused = new CopyOnWriteArrayList<>();

        HostileAspect() {
            propagating.setTaskDecorator(new ContextPropagatingTaskDecorator());
        }

        @Around("@annotation(io.redlease.core.annotation.LeaderOnly)")
        public Object around(ProceedingJoinPoint call) throws Throwable {
            Method method =
                    AopUtils.getMostSpecificMethod(
                            ((MethodSignature) call.getSignature()).getMethod(),
                            call.getTarget().getClass());
            Hostile hostile = method.getAnnotation(Hostile.class);
            if (hostile == null) {
                return call.proceed();
            }
            switch (hostile.value()) {
                case ELSEWHERE:
                    try {
                        return CompletableFuture.supplyAsync(() -> proceed(call)).join();
                    } catch (CompletionException ex) {
                        throw ex.getCause();
                    }
                case NEVER:
                    return null;
                case PROPAGATED_NO_WAIT:
                    propagating.execute(
                            () -> {
                                try {
                                    proceed(call);
                                } catch (RuntimeException ex) {
                                    refused.add(ex);
                                }
                            });
                    return null;
                case RETRY:
                default:
                    try {
                        return call.proceed();
                    } catch (Throwable first) {
                        Thread.interrupted();
                        return call.proceed();
                    }
            }
        }

        private static Object proceed(ProceedingJoinPoint call) {
            try {
                return call.proceed();
            } catch (RuntimeException ex) {
                throw ex;
            } catch (Throwable ex) {
                throw new CompletionException(ex);
            }
        }
    }

    record Seen(OptionalInt partition, Optional<Fencer> fencer, String thread) {}

    static class Recorder {

        final List<Seen> seen = new CopyOnWriteArrayList<>();

        void record(LeadershipContext leadership) {
            seen.add(
                    new Seen(
                            leadership.partition(),
                            leadership.fencer(),
                            Thread.currentThread().getName()));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy(proxyTargetClass = true)
    static class Advised {

        @Bean
        HostileAspect hostileAspect() {
            return new HostileAspect();
        }

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        ElsewhereJob elsewhereJob(LeadershipContext leadership, Recorder recorder) {
            return new ElsewhereJob(leadership, recorder);
        }

        @Bean
        RetriedJob retriedJob(LeadershipContext leadership) {
            return new RetriedJob(leadership);
        }
    }

    static class ElsewhereJob {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        ElsewhereJob(LeadershipContext leadership, Recorder recorder) {
            this.leadership = leadership;
            this.recorder = recorder;
        }

        @Hostile(Mode.ELSEWHERE)
        @LeaderOnly(partitions = "orders")
        public void run() {
            recorder.record(leadership);
        }
    }

    static class RetriedJob {

        private final LeadershipContext leadership;

        final AtomicInteger attempts = new AtomicInteger();

        final List<Optional<Boolean>> retried = new CopyOnWriteArrayList<>();

        RetriedJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        public int attempts() {
            return attempts.get();
        }

        public List<Optional<Boolean>> retried() {
            return retried;
        }

        @Hostile(Mode.RETRY)
        @LeaderOnly(partitions = "orders")
        public void run() {
            if (attempts.incrementAndGet() > 1) {
                retried.add(leadership.boundTerm().map(Term::isActive));
                return;
            }
            leadership.resign(); // ends the partition's term, which interrupts this run
            try {
                new CountDownLatch(1).await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ex) {
                throw new IllegalStateException("cut short by the end of the partition's term", ex);
            }
            throw new IllegalStateException("the end of the partition's term did not interrupt");
        }
    }
}
