package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.scheduling.config.FixedRateTask;
import org.springframework.scheduling.config.IntervalTask;
import org.springframework.scheduling.config.ScheduledTask;
import org.springframework.scheduling.config.ScheduledTaskHolder;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * Hostile probes of {@code @LeaderOnly(oncePerSlot = true)} on Spring paths the other once-per-slot
 * tests do not take. A test that fails here shows a break of the guarantee (or of its promise to
 * refuse at startup what it cannot hold), and asserts the behaviour that would hold it.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotHostileTests {

    /** Every run that reached the method's body with a slot: job, slot, bean and instance. */
    static final Queue<Ran> RUNS = new ConcurrentLinkedQueue<>();

    /** How often a body ran, however it was reached (with or without a slot). */
    static final AtomicInteger BODY = new AtomicInteger();

    /** How often a body returned. */
    static final AtomicInteger COMPLETED = new AtomicInteger();

    /** Holds bodies that wait for the test. */
    static volatile CountDownLatch release = new CountDownLatch(0);

    static volatile CountDownLatch entered = new CountDownLatch(1);

    /** Runs intercepted calls in the background, for the advice that hands them off. */
    static final ExecutorService BACKGROUND = Executors.newSingleThreadExecutor();

    private final Templates templates = new Templates();

    private final List<SlotInstance> instances = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        RUNS.clear();
        BODY.set(0);
        COMPLETED.set(0);
        release = new CountDownLatch(0);
        entered = new CountDownLatch(1);
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        instances.forEach(SlotInstance::close);
        templates.close();
    }

    record Ran(String job, Instant slot, int bean, String instance) {}

    record Outcome(String job, Instant slot, SlotJobs.Result result, long count) {}

    private SlotInstance instance(String id) {
        SlotInstance instance = new SlotInstance(redis, name, id, Duration.ZERO);
        instances.add(instance);
        return instance;
    }

    private static Queue<Outcome> outcomes(SlotInstance instance) {
        Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        instance.jobs()
                .addListener(
                        (job, slot, result, count) ->
                                outcomes.add(new Outcome(job, slot, result, count)));
        return outcomes;
    }

    private static String job(Class<?> type, String method) {
        return "oncePerSlotHostileTests." + type.getSimpleName() + "." + method;
    }

    private Map<Object, Object> ledger(String job) {
        return redis.opsForHash().entries(name + ":slots:" + job);
    }

    /**
     * Waits at most {@code window} for a condition and says whether it came true; for the checks
     * that something does NOT happen, which need a bounded window.
     */
    private static boolean within(Duration window, BooleanSupplier condition) {
        long deadline = System.nanoTime() + window.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return condition.getAsBoolean();
    }

    private static String messages(Throwable ex) {
        StringBuilder messages = new StringBuilder();
        for (Throwable at = ex; at != null; at = at.getCause()) {
            messages.append(at.getMessage()).append('\n');
        }
        return messages.toString();
    }

    /** Records the slot of the calling run. */
    abstract static class Recording {

        final LeadershipContext leadership;

        final String instance;

        Recording(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        void record() {
            BODY.incrementAndGet();
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(new Ran(slot.job(), slot.time(), System.identityHashCode(this), instance));
        }
    }

    // A final method: CGLIB cannot override it, so no advice (neither @LeaderOnly nor the
    // once-per-slot advice) ever sees its calls.

    static class FinalJob {
        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public final void job() {
            BODY.incrementAndGet();
        }
    }

    @Test
    void aFinalOncePerSlotMethodIsRefusedAtStartupOrCompletesItsSlots() {
        SlotInstance a = instance("a").with(FinalJob.class);
        Throwable failure = catchThrowable(a::start);
        if (failure != null) {
            assertThat(messages(failure)).contains("FinalJob.job()");
            return;
        }
        Queue<Outcome> outcomes = outcomes(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> BODY.get() >= 4 && outcomes.size() >= 3);
        assertThat(ledger(job(FinalJob.class, "job")))
                .as(
                        "a final once-per-slot method was accepted at startup; its body ran %s"
                                + " times on the leader, and no run marked its slot: %s",
                        BODY.get(), outcomes)
                .containsKey("slot");
    }

    // A static method: no proxy can advise it either.

    static class StaticJob {
        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public static void job() {
            BODY.incrementAndGet();
        }
    }

    @Test
    void aStaticOncePerSlotMethodIsRefusedAtStartupOrRunsOnlyOnTheLeader() {
        SlotInstance a = instance("a").with(StaticJob.class);
        // The context only: this instance's elector never starts, so it never leads.
        Throwable failure = catchThrowable(a.context::refresh);
        if (failure != null) {
            assertThat(messages(failure)).contains("StaticJob.job()");
            return;
        }
        // A bounded window to see that the method does not run on an instance that never leads.
        boolean ran = within(Duration.ofSeconds(3), () -> BODY.get() >= 3);
        assertThat(ran)
                .as(
                        "a static once-per-slot method was accepted at startup and ran %s times on"
                                + " an instance that never led",
                        BODY.get())
                .isFalse();
    }

    // A prototype bean: each instance Spring creates is scheduled, and each becomes a job of the
    // same id, sharing one ledger but each with its own view of it.

    static class PrototypeJob extends Recording {
        PrototypeJob(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void aOncePerSlotJobOnAPrototypeBeanRunsEachSlotOnce() {
        // One scheduler thread: the two beans' runs of a slot follow each other, never overlap.
        SlotInstance a =
                new SlotInstance(
                        redis,
                        name,
                        "a",
                        context ->
                                context.registerBean(
                                        "taskScheduler",
                                        ThreadPoolTaskScheduler.class,
                                        () -> SlotInstance.scheduler("a", Duration.ZERO, 1)));
        instances.add(a);
        a.context.registerBean(
                PrototypeJob.class,
                definition -> definition.setScope(BeanDefinition.SCOPE_PROTOTYPE));
        a.start();
        Queue<Outcome> outcomes = outcomes(a);
        Throwable first = catchThrowable(() -> a.context.getBean(PrototypeJob.class));
        Throwable second =
                first != null ? first : catchThrowable(() -> a.context.getBean(PrototypeJob.class));
        if (second != null) {
            assertThat(messages(second)).contains("PrototypeJob.job()");
            return;
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> RUNS.size() >= 8);
        Map<Instant, List<Ran>> bySlot =
                RUNS.stream()
                        .collect(
                                Collectors.groupingBy(
                                        Ran::slot, TreeMap::new, Collectors.toList()));
        assertThat(bySlot.values())
                .as(
                        "runs of each slot, with the bean that ran it: %s; outcomes in the order"
                                + " the runs ended: %s",
                        bySlot, outcomes)
                .allSatisfy(runs -> assertThat(runs).hasSize(1));
    }

    // Spring 7's @Retryable: its advice goes in front of @LeaderOnly and retries through it.

    static final AtomicInteger ATTEMPTS = new AtomicInteger();

    @EnableResilientMethods
    static class RetryingJob extends Recording {
        RetryingJob(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Retryable(maxRetries = 2, delay = 10)
        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            if (ATTEMPTS.incrementAndGet() == 1) {
                throw new IllegalStateException("a transient failure, for @Retryable to retry");
            }
            record();
        }
    }

    @Test
    void aRetryableOncePerSlotMethodCompletesItsSlotOnTheRetryOrIsRefused() {
        ATTEMPTS.set(0);
        SlotInstance a = instance("a").with(RetryingJob.class);
        Throwable failure = catchThrowable(a.context::refresh);
        if (failure != null) {
            assertThat(messages(failure)).contains("RetryingJob.job()");
            return;
        }
        Queue<Outcome> outcomes = outcomes(a);
        a.elector.start();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                outcomes.stream()
                                        .anyMatch(o -> o.result() != SlotJobs.Result.SKIPPED));
        Outcome first =
                outcomes.stream()
                        .filter(o -> o.result() != SlotJobs.Result.SKIPPED)
                        .findFirst()
                        .orElseThrow();
        assertThat(first.result())
                .as(
                        "the first slot's first attempt failed and @Retryable retried it (%s"
                                + " attempts, %s bodies completed); its outcome",
                        ATTEMPTS.get(), RUNS.size())
                .isIn(SlotJobs.Result.RUN, SlotJobs.Result.CAUGHT_UP);
    }

    // An overload of a once-per-slot method is another method.

    static class Overloaded extends Recording {
        Overloaded(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void report() {
            record();
        }

        /** Builds the report of one day on demand: not scheduled, not leader-only. */
        public String report(String day) {
            return "report of " + day;
        }
    }

    @Test
    void anOverloadOfAOncePerSlotMethodCanBeCalled() {
        SlotInstance a = instance("a").with(Overloaded.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> !RUNS.isEmpty());
        Overloaded bean = a.context.getBean(Overloaded.class);
        assertThatCode(
                        () ->
                                assertThat(bean.report("2025-03-30"))
                                        .isEqualTo("report of 2025-03-30"))
                .as(
                        "calling report(String), an overload that is neither @Scheduled nor @LeaderOnly")
                .doesNotThrowAnyException();
    }

    // A cron trigger without a zone, on instances whose clocks are in different zones.

    static class EveryTwoSeconds extends Recording {
        EveryTwoSeconds(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(cron = "*/2 * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    private SlotInstance zoned(String id, ZoneOffset zone) {
        SlotInstance instance =
                new SlotInstance(
                        redis,
                        name,
                        id,
                        context ->
                                context.registerBean(
                                        "taskScheduler",
                                        ThreadPoolTaskScheduler.class,
                                        () -> {
                                            ThreadPoolTaskScheduler scheduler =
                                                    SlotInstance.scheduler(id, Duration.ZERO, 2);
                                            scheduler.setClock(Clock.system(zone));
                                            return scheduler;
                                        }));
        instances.add(instance);
        return instance;
    }

    @Test
    void cronSlotsAreTheSameInstantsOnInstancesWhoseClocksAreInDifferentZones() {
        SlotInstance a = zoned("a", ZoneOffset.UTC).with(EveryTwoSeconds.class).start();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RUNS.stream().filter(run -> run.instance().equals("a")).count() >= 2);
        // The same clock, one second east: a zone whose offset is not a whole number of periods.
        SlotInstance b =
                zoned("b", ZoneOffset.ofTotalSeconds(1)).with(EveryTwoSeconds.class).start();
        a.close();
        instances.remove(a);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> RUNS.stream().filter(run -> run.instance().equals("b")).count() >= 2);
        List<Ran> runs = List.copyOf(RUNS);
        assertThat(runs.stream().map(run -> run.slot().getEpochSecond() % 2).distinct())
                .as(
                        "the slots of one cron job on two instances, one second apart in zone: %s",
                        runs)
                .hasSize(1);
    }

    // A SchedulingConfigurer that decorates the scheduled tasks (for an MDC or a trace), as
    // applications do.

    static class Decorating implements SchedulingConfigurer {
        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            List<IntervalTask> decorated = new ArrayList<>();
            for (IntervalTask task : registrar.getFixedRateTaskList()) {
                Runnable runnable = task.getRunnable();
                decorated.add(
                        new FixedRateTask(
                                () -> {
                                    Thread.currentThread()
                                            .setName(Thread.currentThread().getName());
                                    runnable.run();
                                },
                                task.getIntervalDuration(),
                                task.getInitialDelayDuration()));
            }
            registrar.setFixedRateTasksList(decorated);
        }
    }

    static class DecoratedJob extends Recording {
        DecoratedJob(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void aJobWhoseTaskAConfigurerDecoratedIsRefusedAtStartupOrRuns() {
        SlotInstance a = instance("a").with(Decorating.class, DecoratedJob.class);
        Throwable failure = catchThrowable(a::start);
        if (failure != null) {
            assertThat(messages(failure)).contains("DecoratedJob.job");
            return;
        }
        // A bounded window for the job's first slots: a healthy leader runs one every 300 ms.
        boolean marked =
                within(
                        Duration.ofSeconds(5),
                        () -> ledger(job(DecoratedJob.class, "job")).containsKey("slot"));
        assertThat(marked)
                .as(
                        "startup accepted a once-per-slot job whose task a SchedulingConfigurer"
                                + " decorated; in 5 s of leading it completed no slot (%s bodies"
                                + " ran)",
                        BODY.get())
                .isTrue();
    }

    // Advice behind the once-per-slot advice: another advising post-processor, ordered after
    // redlease's like every such post-processor by default, adds its advisor after redlease's.

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface InBackground {}

    /**
     * Runs annotated methods in the background: an asynchronous advice of the application's own.
     */
    static class BackgroundPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
        private static final long serialVersionUID = 1L;

        BackgroundPostProcessor() {
            MethodInterceptor background =
                    (MethodInvocation invocation) -> {
                        BACKGROUND.execute(
                                () -> {
                                    try {
                                        invocation.proceed();
                                    } catch (Throwable ex) {
                                        // Logged by the application, in real life.
                                    }
                                });
                        return null;
                    };
            this.advisor =
                    new DefaultPointcutAdvisor(
                            new AnnotationMatchingPointcut(null, InBackground.class, true),
                            background);
        }
    }

    /** The same advice, in front of the advisors already on the bean. */
    static class InFrontBackgroundPostProcessor extends BackgroundPostProcessor {
        private static final long serialVersionUID = 1L;

        InFrontBackgroundPostProcessor() {
            setBeforeExistingAdvisors(true);
        }
    }

    static class BackgroundJob {
        @InBackground
        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() throws InterruptedException {
            BODY.incrementAndGet();
            entered.countDown();
            release.await(30, TimeUnit.SECONDS);
            COMPLETED.incrementAndGet();
        }
    }

    @Test
    void asynchronousAdviceBehindTheOncePerSlotAdviceIsRefusedOrMarksNoSlot() {
        release = new CountDownLatch(1);
        SlotInstance a = instance("a");
        a.context.registerBean(BackgroundPostProcessor.class);
        a.with(BackgroundJob.class);
        Throwable failure = catchThrowable(a.context::refresh);
        if (failure != null) {
            assertThat(messages(failure)).contains("BackgroundJob.job");
            return;
        }
        Queue<Outcome> outcomes = outcomes(a);
        a.elector.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> !outcomes.isEmpty());
        // The body has not returned: it waits for `release`.
        assertThat(ledger(job(BackgroundJob.class, "job")))
                .as(
                        "the ledger while the only body that started (%s started, %s returned) is"
                                + " still running in the background; outcomes %s",
                        BODY.get(), COMPLETED.get(), outcomes)
                .doesNotContainKey("slot");
    }

    @Test
    void asynchronousAdviceInFrontOfLeaderOnlyMarksNoSlot() {
        release = new CountDownLatch(1);
        SlotInstance a = instance("a");
        a.context.registerBean(InFrontBackgroundPostProcessor.class);
        a.with(BackgroundJob.class);
        Throwable failure = catchThrowable(a.context::refresh);
        if (failure != null) {
            assertThat(messages(failure)).contains("BackgroundJob.job");
            return;
        }
        Queue<Outcome> outcomes = outcomes(a);
        a.elector.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> outcomes.size() >= 2);
        assertThat(outcomes)
                .extracting(Outcome::result)
                .contains(SlotJobs.Result.FAILED)
                .doesNotContain(SlotJobs.Result.RUN, SlotJobs.Result.CAUGHT_UP);
        assertThat(ledger(job(BackgroundJob.class, "job"))).doesNotContainKey("slot");
    }

    /** Skips annotated methods while a feature is off: answers without calling the method. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @interface Toggled {}

    static class TogglePostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
        private static final long serialVersionUID = 1L;

        TogglePostProcessor() {
            MethodInterceptor off = (MethodInvocation invocation) -> null;
            this.advisor =
                    new DefaultPointcutAdvisor(
                            new AnnotationMatchingPointcut(null, Toggled.class, true), off);
        }
    }

    static class ToggledJob {
        @Toggled
        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            BODY.incrementAndGet();
        }
    }

    @Test
    void adviceBehindTheOncePerSlotAdviceThatAnswersWithoutCallingTheMethodMarksNoSlot() {
        SlotInstance a = instance("a");
        a.context.registerBean(TogglePostProcessor.class);
        a.with(ToggledJob.class);
        Throwable failure = catchThrowable(a.context::refresh);
        if (failure != null) {
            assertThat(messages(failure)).contains("ToggledJob.job");
            return;
        }
        Queue<Outcome> outcomes = outcomes(a);
        a.elector.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> outcomes.size() >= 2);
        assertThat(ledger(job(ToggledJob.class, "job")))
                .as(
                        "the ledger of a job whose method never ran (%s bodies ran); outcomes %s",
                        BODY.get(), outcomes)
                .doesNotContainKey("slot");
    }

    // Paths that hold: a JDK proxy, a @Configuration class, a @Lazy bean.

    interface Report {
        void job();
    }

    static class InterfaceJob extends Recording implements Report {
        InterfaceJob(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Override
        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void aJobBehindAJdkProxyRunsAndMarksItsSlotsAndRefusesADirectCall() {
        SlotInstance a = instance("a").with(InterfaceJob.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        Report bean = a.context.getBean(Report.class);
        assertThat(org.springframework.aop.support.AopUtils.isJdkDynamicProxy(bean)).isTrue();
        assertThat(ledger(job(InterfaceJob.class, "job"))).containsKey("slot");
        assertThat(catchThrowable(bean::job))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("runs only as one of its slots");
    }

    @org.springframework.context.annotation.Configuration
    static class ConfigurationJob {
        @org.springframework.beans.factory.annotation.Autowired LeadershipContext leadership;

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            BODY.incrementAndGet();
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(new Ran(slot.job(), slot.time(), System.identityHashCode(this), "a"));
        }
    }

    @Test
    void aJobOnAFullConfigurationClassRunsAndMarksItsSlots() {
        instance("a").with(ConfigurationJob.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        assertThat(ledger(job(ConfigurationJob.class, "job"))).containsKey("slot");
    }

    @Test
    void aJobOnALazyBeanCreatedWhileLeadingRunsAndMarksItsSlots() {
        SlotInstance a = instance("a");
        a.context.registerBean(OnDemandJob.class, definition -> definition.setLazyInit(true));
        a.start();
        await().atMost(Duration.ofSeconds(10)).until(a.elector::isLeader);
        a.context.getBean(OnDemandJob.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        assertThat(ledger(job(OnDemandJob.class, "job"))).containsKey("slot");
    }

    static class OnDemandJob extends Recording {
        OnDemandJob(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    // Spring's ScheduledTask#cancel() interrupts a task that is running: the run is cut short
    // while its term goes on.

    static final AtomicInteger CUT = new AtomicInteger();

    static final java.util.concurrent.atomic.AtomicReference<Instant> CUT_SLOT =
            new java.util.concurrent.atomic.AtomicReference<>();

    static class Interruptible {
        final LeadershipContext leadership;

        Interruptible(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            if (BODY.incrementAndGet() != 3) {
                // The first runs complete at once: the third is one of a chain in its steady state.
                COMPLETED.incrementAndGet();
                return;
            }
            CUT_SLOT.set(leadership.slot().orElseThrow().time());
            entered.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
                COMPLETED.incrementAndGet();
            } catch (InterruptedException ex) {
                // Cut short: the method gives up its work and returns normally.
                CUT.incrementAndGet();
            }
        }
    }

    @Test
    void aRunCutShortByCancellingItsScheduledTaskIsNotMarked() throws Exception {
        CUT.set(0);
        CUT_SLOT.set(null);
        release = new CountDownLatch(1);
        SlotInstance a = instance("a").with(Interruptible.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        ScheduledTask task =
                a.context.getBean(ScheduledTaskHolder.class).getScheduledTasks().stream()
                        .filter(t -> t.toString().contains("Interruptible.job"))
                        .findFirst()
                        .orElseThrow();
        // ScheduledTask#cancel(): "will force interruption of the task if still running".
        task.cancel();
        Instant cut = CUT_SLOT.get();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                CUT.get() == 1
                                        && outcomes.stream().anyMatch(o -> o.slot().equals(cut)));
        Map<Object, Object> ledger = ledger(job(Interruptible.class, "job"));
        assertThat(Instant.ofEpochMilli(Long.parseLong((String) ledger.get("slot"))))
                .as(
                        "the ledger's completed slot after the third run (slot %s) was interrupted"
                                + " by its task's cancellation (%s cut short, %s completed);"
                                + " outcomes %s",
                        cut, CUT.get(), COMPLETED.get(), outcomes)
                .isBefore(cut);
    }

    // A fixed delay with RUN_ALL: a slot whose run failed.

    static final AtomicInteger DELAY_CALLS = new AtomicInteger();

    static class FailingOnceDelay {
        final LeadershipContext leadership;

        FailingOnceDelay(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedDelay = 300)
        @LeaderOnly(
                oncePerSlot = true,
                missedSlots = io.redlease.core.scheduling.MissedSlots.RUN_ALL)
        public void job() {
            Slot slot = leadership.slot().orElseThrow();
            if (DELAY_CALLS.incrementAndGet() == 1) {
                throw new IllegalStateException("the first run fails");
            }
            RUNS.add(new Ran(slot.job(), slot.time(), 0, "a"));
        }
    }

    @Test
    void aFixedDelaySlotWhoseRunFailedRunsAgainOrIsCountedAsMissedUnderRunAll() {
        DELAY_CALLS.set(0);
        SlotInstance a = instance("a").with(FailingOnceDelay.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                outcomes.stream()
                                                .filter(o -> o.result() == SlotJobs.Result.RUN)
                                                .count()
                                        >= 3);
        Instant failed =
                outcomes.stream()
                        .filter(o -> o.result() == SlotJobs.Result.FAILED)
                        .map(Outcome::slot)
                        .findFirst()
                        .orElseThrow();
        boolean ranAgain = RUNS.stream().anyMatch(run -> run.slot().equals(failed));
        boolean counted = outcomes.stream().anyMatch(o -> o.result() == SlotJobs.Result.MISSED);
        assertThat(ranAgain || counted)
                .as(
                        "slot %s failed under RUN_ALL; it neither ran again nor was counted as"
                                + " missed: outcomes %s",
                        failed, outcomes)
                .isTrue();
    }

    // A period that is not a whole number of milliseconds (the ledger keeps milliseconds).

    static class MicroRate extends Recording {
        MicroRate(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @Scheduled(fixedRate = 250_500, timeUnit = TimeUnit.MICROSECONDS)
        @LeaderOnly(oncePerSlot = true)
        public void job() {
            record();
        }
    }

    @Test
    void aFixedRateOfMicrosecondsIsRefusedOrKeptExactly() {
        SlotInstance a = instance("a").with(MicroRate.class);
        Throwable failure = catchThrowable(a::start);
        if (failure != null) {
            assertThat(messages(failure)).contains("MicroRate.job");
            return;
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 5);
        List<Instant> slots = RUNS.stream().map(Ran::slot).toList();
        Duration four = Duration.between(slots.get(0), slots.get(4));
        assertThat(four)
                .as(
                        "four periods of fixedRate = 250500 us, between the slots %s (the trigger"
                                + " Spring was given fires 1002 ms apart)",
                        slots)
                .isEqualTo(Duration.ofMillis(1002));
    }

    // A composed annotation that carries both @Scheduled and @LeaderOnly(oncePerSlot = true).

    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @Scheduled(fixedRate = 300)
    @LeaderOnly(oncePerSlot = true)
    @interface EveryThirdOfASecondOnce {}

    static class ComposedJob extends Recording {
        ComposedJob(LeadershipContext leadership, String instanceId) {
            super(leadership, instanceId);
        }

        @EveryThirdOfASecondOnce
        public void job() {
            record();
        }
    }

    @Test
    void aComposedAnnotationMakesAOncePerSlotJob() {
        instance("a").with(ComposedJob.class).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNS.size() >= 3);
        assertThat(ledger(job(ComposedJob.class, "job"))).containsKey("slot");
    }

    // A mark whose reply is lost: Redis applies it, the client gives up waiting. The run counts as
    // failed, and its term still believes the slot is not done.

    static final AtomicInteger STALL_CALLS = new AtomicInteger();

    static final java.util.concurrent.atomic.AtomicReference<Instant> STALLED_SLOT =
            new java.util.concurrent.atomic.AtomicReference<>();

    static volatile StringRedisTemplate pauser;

    static class StallingJob {
        final LeadershipContext leadership;

        StallingJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(
                oncePerSlot = true,
                missedSlots = io.redlease.core.scheduling.MissedSlots.RUN_ALL)
        public void job() {
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(new Ran(slot.job(), slot.time(), 0, "a"));
            if (STALL_CALLS.incrementAndGet() == 4) {
                STALLED_SLOT.set(slot.time());
                // Redis stops answering for 400 ms, right before this run's mark is sent: longer
                // than the client waits for the mark's reply, shorter than the lease.
                pauser.execute(
                        (org.springframework.data.redis.core.RedisCallback<Object>)
                                connection ->
                                        connection.execute(
                                                "CLIENT",
                                                "PAUSE".getBytes(),
                                                "400".getBytes(),
                                                "ALL".getBytes()));
            }
        }
    }

    @Test
    void aSlotWhoseMarkReachedRedisDoesNotRunAgainWhenTheMarksReplyIsLost(RedisServer server) {
        STALL_CALLS.set(0);
        STALLED_SLOT.set(null);
        pauser = redis;
        // The elector's client waits 150 ms for a reply (the engine bounds its own round trips).
        StringRedisTemplate impatient =
                templates.on(
                        server.host(), server.port(), server.password(), Duration.ofMillis(150));
        SlotInstance a = new SlotInstance(impatient, name, "a", Duration.ZERO);
        instances.add(a);
        a.with(StallingJob.class).start();
        Queue<Outcome> outcomes = outcomes(a);
        await().atMost(Duration.ofSeconds(15)).until(() -> STALL_CALLS.get() >= 9);
        Instant stalled = STALLED_SLOT.get();
        Map<Object, Object> ledger = ledger(job(StallingJob.class, "job"));
        List<Ran> runsOfStalled = RUNS.stream().filter(run -> run.slot().equals(stalled)).toList();
        assertThat(runsOfStalled)
                .as(
                        "runs of slot %s, whose mark Redis applied while its reply was lost; the"
                                + " ledger %s; outcomes %s",
                        stalled, ledger, outcomes)
                .hasSize(1);
    }
}
