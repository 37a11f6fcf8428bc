package io.redlease.core;

import static io.redlease.test.TestTimeScale.scaled;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.framework.autoproxy.BeanNameAutoProxyCreator;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Scope;
import org.springframework.context.annotation.ScopedProxyMode;
import org.springframework.dao.annotation.PersistenceExceptionTranslationPostProcessor;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.stereotype.Repository;

/**
 * The innermost run guard (LeaderOnlyRunGuard) on the proxy shapes Spring makes: scoped proxies,
 * frozen proxies (refused at startup when @LeaderOnly cannot join their chain), lazy beans and
 * prototypes with advice on both sides of the guard, nested calls across elections, JDK proxies,
 * an @Async method on a context-propagating executor. The clock jumps past the deadline where a
 * test needs a late start.
 */
@ExtendWith(RedisExtension.class)
class LeaderOnlyProxyShapesTests {

    private static final Duration TTL = Duration.ofSeconds(30);

    static final AtomicLong CLOCK_OFFSET = new AtomicLong();

    static final AtomicInteger BODIES = new AtomicInteger();

    static final AtomicInteger BODIES_PAST_DEADLINE = new AtomicInteger();

    static final AtomicReference<String> LAST = new AtomicReference<>();

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private AnnotationConfigApplicationContext context;

    private String name;

    private RedisServer server;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
        CLOCK_OFFSET.set(0);
        BODIES.set(0);
        BODIES_PAST_DEADLINE.set(0);
        LAST.set(null);
    }

    @AfterEach
    void tearDown() {
        if (context != null) {
            context.close();
        }
        electors.forEach(Elector::close);
        templates.close();
    }

    static void passTheDeadline() {
        CLOCK_OFFSET.set(TTL.plusSeconds(1).toNanos());
    }

    static void body(LeadershipContext leadership) {
        BODIES.incrementAndGet();
        Term term = leadership.term().orElseThrow();
        LAST.set(term + " endReason=" + term.endReason());
        if (!term.isActive()) {
            BODIES_PAST_DEADLINE.incrementAndGet();
        }
    }

    private Elector elector(String suffix) {
        Elector elector =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(name + suffix)
                                .ttl(TTL)
                                .renewInterval(TTL.dividedBy(3))
                                .acquireInterval(Duration.ofMillis(100))
                                .clock(() -> System.nanoTime() + CLOCK_OFFSET.get())
                                .build());
        electors.add(elector);
        return elector;
    }

    private void start(Class<?>... components) {
        Map<String, Elector> all = new LinkedHashMap<>();
        all.put(Elections.DEFAULT, elector(""));
        all.put("other", elector(":other"));
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Elections.class, () -> Elections.of(all));
        context.registerBean(
                LeadershipContext.class,
                () -> new LeadershipContext(context.getBean(Elections.class)));
        context.register(Infrastructure.class);
        context.register(components);
        context.refresh();
        electors.forEach(Elector::start);
        await().atMost(scaled(Duration.ofSeconds(10)))
                .until(() -> electors.stream().allMatch(Elector::isLeader));
    }

    @Configuration(proxyBeanMethods = false)
    static class Infrastructure {
        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }
    }

    public static class PlainJob {
        private final LeadershipContext leadership;

        public PlainJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        public void run() {
            body(leadership);
        }
    }

    // A. A scoped proxy (@Scope(proxyMode = TARGET_CLASS), as @RefreshScope, @RequestScope and
    // friends make): the scoped proxy is an AopInfrastructureBean that redlease does not advise,
    // but the run guard is now added to it.

    @Configuration(proxyBeanMethods = false)
    static class ScopedProxyConfig {
        @Bean
        @Scope(
                value = ConfigurableBeanFactory.SCOPE_PROTOTYPE,
                proxyMode = ScopedProxyMode.TARGET_CLASS)
        PlainJob plainJob(LeadershipContext leadership) {
            return new PlainJob(leadership);
        }
    }

    @Test
    void aScopedProxyLeaderOnlyBeanRunsWhileLeading() {
        start(ScopedProxyConfig.class);
        context.getBean(PlainJob.class).run();
        assertThat(BODIES.get()).as("bodies started").isOne();
    }

    // B. A bean created after startup (@Lazy singleton) whose proxy has advice added before
    // redlease's by a later post-processor (@ConcurrencyLimit, like @Async or @Retryable with their
    // default order) and advice added after the guard (@Repository exception translation, like
    // @Validated method validation): its first call is refused.

    @Repository
    public static class LimitedRepository {
        private final LeadershipContext leadership;

        public LimitedRepository(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        @ConcurrencyLimit(1)
        public void run() {
            body(leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class LateRepositoryConfig {
        @Bean
        static PersistenceExceptionTranslationPostProcessor exceptionTranslation() {
            return new PersistenceExceptionTranslationPostProcessor();
        }

        @Bean
        PersistenceExceptionTranslator translator() {
            return ex -> null;
        }

        @Bean
        @Lazy
        LimitedRepository limitedRepository(LeadershipContext leadership) {
            return new LimitedRepository(leadership);
        }
    }

    @Test
    void theFirstCallOfALazyBeanWithAdviceOnBothSidesRuns() {
        start(LateRepositoryConfig.class);
        LimitedRepository repository = context.getBean(LimitedRepository.class);
        repository.run();
        repository.run();
        assertThat(BODIES.get()).as("bodies started").isEqualTo(2);
    }

    public static class Holder {
        final LimitedRepository repository;

        public Holder(LimitedRepository repository) {
            this.repository = repository;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class StartupPrototypeConfig {
        @Bean
        static PersistenceExceptionTranslationPostProcessor exceptionTranslation() {
            return new PersistenceExceptionTranslationPostProcessor();
        }

        @Bean
        PersistenceExceptionTranslator translator() {
            return ex -> null;
        }

        @Bean
        @Scope(ConfigurableBeanFactory.SCOPE_PROTOTYPE)
        LimitedRepository limitedRepository(LeadershipContext leadership) {
            return new LimitedRepository(leadership);
        }

        @Bean
        Holder holder(LimitedRepository repository) {
            return new Holder(repository);
        }
    }

    /** A prototype created at startup (injected into a singleton), same advice. */
    @Test
    void theFirstCallOfAPrototypeCreatedAtStartupWithAdviceOnBothSidesRuns() {
        start(StartupPrototypeConfig.class);
        LimitedRepository repository = context.getBean(Holder.class).repository;
        repository.run();
        repository.run();
        assertThat(BODIES.get()).as("bodies started").isEqualTo(2);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class EagerRepositoryConfig {
        @Bean
        static PersistenceExceptionTranslationPostProcessor exceptionTranslation() {
            return new PersistenceExceptionTranslationPostProcessor();
        }

        @Bean
        PersistenceExceptionTranslator translator() {
            return ex -> null;
        }

        @Bean
        LimitedRepository limitedRepository(LeadershipContext leadership) {
            return new LimitedRepository(leadership);
        }
    }

    /** Control: the same bean created at startup. */
    @Test
    void controlTheSameBeanCreatedAtStartupRuns() {
        start(EagerRepositoryConfig.class);
        LimitedRepository repository = context.getBean(LimitedRepository.class);
        repository.run();
        repository.run();
        assertThat(BODIES.get()).as("bodies started").isEqualTo(2);
    }

    // C. A frozen proxy made by a post-processor before redlease's, with advice that delays the
    // method (a slow transaction begin, stood in for by the clock's jump): redlease wraps the
    // frozen proxy in a proxy of its own, so its guard runs before the frozen proxy's advice.

    public interface Job {
        @LeaderOnly
        void run();
    }

    public static class InterfaceJob implements Job {
        private final LeadershipContext leadership;

        public InterfaceJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Override
        public void run() {
            body(leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FrozenConfig {
        @Bean
        static BeanNameAutoProxyCreator frozenProxies() {
            BeanNameAutoProxyCreator creator = new BeanNameAutoProxyCreator();
            creator.setBeanNames("job");
            creator.setInterceptorNames("slowBegin");
            creator.setFrozen(true);
            creator.setOrder(0);
            return creator;
        }

        @Bean
        MethodInterceptor slowBegin() {
            return invocation -> {
                passTheDeadline(); // e.g. a transaction whose begin waited for a connection
                return invocation.proceed();
            };
        }

        @Bean
        Job job(LeadershipContext leadership) {
            return new InterfaceJob(leadership);
        }
    }

    @Test
    void aFrozenProxyWithAdviceOfItsOwnIsRefusedAtStartup() {
        // Its advice would run between the term's check and the method (before: the method
        // started past the deadline, active=false).
        assertThatThrownBy(() -> start(FrozenConfig.class))
                .hasStackTraceContaining("bean 'job'")
                .hasStackTraceContaining("frozen proxy with advice of its own")
                .hasStackTraceContaining("do not freeze that proxy");
        assertThat(BODIES.get()).isZero();
    }

    /** The same frozen JDK proxy, @LeaderOnly on the class's method only. */
    public interface PlainInterface {
        void run();
    }

    /**
     * A frozen JDK proxy with @LeaderOnly on the class only: redlease can neither add its advice
     * nor proxy the proxy. A call on an instance that does not lead 'other' must be skipped, or the
     * bean refused at startup (before: startup passed and the method ran on the follower; after the
     * merge: startup failed with AopConfigException 'Cannot add advisor').
     */
    public static class OtherImpl implements PlainInterface {
        private final LeadershipContext leadership;

        public OtherImpl(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Override
        @LeaderOnly("other")
        public void run() {
            BODIES.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class FrozenOtherConfig {
        @Bean
        static BeanNameAutoProxyCreator frozenProxies() {
            BeanNameAutoProxyCreator creator = new BeanNameAutoProxyCreator();
            creator.setBeanNames("job");
            creator.setInterceptorNames("passThrough");
            creator.setFrozen(true);
            creator.setOrder(0);
            return creator;
        }

        @Bean
        MethodInterceptor passThrough() {
            return invocation -> invocation.proceed();
        }

        @Bean
        PlainInterface job(LeadershipContext leadership) {
            return new OtherImpl(leadership);
        }
    }

    @Test
    void frozenJdkProxyWithTheAnnotationOnTheClassIsLeaderOnlyOrRefused() {
        try {
            start(FrozenOtherConfig.class);
        } catch (BeanCreationException ex) {
            // fails closed: refused at startup, naming the bean and the fix
            assertThat(ex).hasMessageContaining("'job'").hasMessageContaining("do not freeze");
            return;
        }
        electors.get(1).stop();
        await().atMost(scaled(Duration.ofSeconds(10))).until(() -> !electors.get(1).isLeader());
        context.getBean(PlainInterface.class).run();
        assertThat(BODIES.get()).as("bodies started on a follower of 'other'").isZero();
    }

    // D. Nested @LeaderOnly calls across beans: same election, and another election.

    public static class Inner {
        private final LeadershipContext leadership;

        public Inner(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        public void same() {
            body(leadership);
        }

        @LeaderOnly("other")
        public void other() {
            body(leadership);
        }
    }

    public static class Outer {
        private final Inner inner;

        public Outer(Inner inner) {
            this.inner = inner;
        }

        @LeaderOnly
        public void callSame() {
            inner.same();
        }

        @LeaderOnly
        public void callOther() {
            inner.other();
        }

        @LeaderOnly("other")
        public void otherCallsDefault() {
            inner.same();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NestedConfig {
        @Bean
        Inner inner(LeadershipContext leadership) {
            return new Inner(leadership);
        }

        @Bean
        Outer outer(Inner inner) {
            return new Outer(inner);
        }
    }

    @Test
    void nestedLeaderOnlyCallsRunInTheSameAndInAnotherElection() {
        start(NestedConfig.class);
        Outer outer = context.getBean(Outer.class);
        outer.callSame();
        outer.callOther();
        outer.otherCallsDefault();
        assertThat(BODIES.get()).as("bodies started").isEqualTo(3);
    }

    // E. @Async (default order, outside @LeaderOnly) on an executor whose tasks carry the caller's
    // terms (ContextPropagatingTaskDecorator): a blocking (void) @LeaderOnly method called from
    // inside another @LeaderOnly call, and from a thread without a term.

    public static class AsyncInner {
        private final LeadershipContext leadership;

        public AsyncInner(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly
        @org.springframework.scheduling.annotation.Async
        public void fire(java.util.concurrent.CountDownLatch done) {
            try {
                body(leadership);
            } finally {
                done.countDown();
            }
        }
    }

    public static class AsyncOuter {
        private final AsyncInner inner;

        public AsyncOuter(AsyncInner inner) {
            this.inner = inner;
        }

        @LeaderOnly
        public void call(java.util.concurrent.CountDownLatch done) {
            inner.fire(done);
        }

        @LeaderOnly("other")
        public void callFromOther(java.util.concurrent.CountDownLatch done) {
            inner.fire(done);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @org.springframework.scheduling.annotation.EnableAsync
    static class PropagatingAsyncConfig {
        @Bean
        org.springframework.core.task.SimpleAsyncTaskExecutor taskExecutor() {
            org.springframework.core.task.SimpleAsyncTaskExecutor executor =
                    new org.springframework.core.task.SimpleAsyncTaskExecutor();
            executor.setTaskDecorator(
                    new org.springframework.core.task.support.ContextPropagatingTaskDecorator());
            return executor;
        }

        @Bean
        AsyncInner asyncInner(LeadershipContext leadership) {
            return new AsyncInner(leadership);
        }

        @Bean
        AsyncOuter asyncOuter(AsyncInner inner) {
            return new AsyncOuter(inner);
        }
    }

    @Test
    void asyncLeaderOnlyOnAPropagatingExecutorRunsFromInsideAndOutsideATerm() throws Exception {
        start(PropagatingAsyncConfig.class);
        awaitDone(done -> context.getBean(AsyncOuter.class).call(done));
        awaitDone(done -> context.getBean(AsyncOuter.class).callFromOther(done));
        awaitDone(done -> context.getBean(AsyncInner.class).fire(done));
        assertThat(BODIES.get()).as("bodies started (last %s)", LAST.get()).isEqualTo(3);
        assertThat(BODIES_PAST_DEADLINE.get()).isZero();
    }

    private static void awaitDone(
            java.util.function.Consumer<java.util.concurrent.CountDownLatch> call)
            throws InterruptedException {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        call.accept(done);
        assertThat(done.await(scaled(Duration.ofSeconds(10)).toMillis(), MILLISECONDS)).isTrue();
    }

    // F. JDK proxies (@EnableTransactionManagement(proxyTargetClass = false)) with a transaction
    // whose begin passes the deadline; @LeaderOnly on the interface, and on the class.

    public interface TxOnInterface {
        @LeaderOnly
        void run();
    }

    public interface TxPlain {
        void run();
    }

    public static class TxInterfaceJob implements TxOnInterface {
        private final LeadershipContext leadership;

        public TxInterfaceJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Override
        @org.springframework.transaction.annotation.Transactional
        public void run() {
            body(leadership);
        }
    }

    public static class TxClassJob implements TxPlain {
        private final LeadershipContext leadership;

        public TxClassJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Override
        @LeaderOnly
        @org.springframework.transaction.annotation.Transactional
        public void run() {
            body(leadership);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @org.springframework.transaction.annotation.EnableTransactionManagement(
            proxyTargetClass = false)
    static class JdkTxConfig {
        @Bean
        LeaderOnlyDeadlineGuardTests.SlowBeginTransactionManager transactionManager() {
            return new LeaderOnlyDeadlineGuardTests.SlowBeginTransactionManager() {
                private static final long serialVersionUID = 1L;

                @Override
                protected void doBegin(
                        Object transaction,
                        org.springframework.transaction.TransactionDefinition definition) {
                    passTheDeadline();
                }
            };
        }

        @Bean
        TxOnInterface onInterface(LeadershipContext leadership) {
            return new TxInterfaceJob(leadership);
        }

        @Bean
        TxPlain onClass(LeadershipContext leadership) {
            return new TxClassJob(leadership);
        }
    }

    @Test
    void jdkProxiesWithASlowTransactionBeginDoNotStartPastTheDeadline() {
        start(JdkTxConfig.class);
        assertThat(
                        org.springframework.aop.support.AopUtils.isJdkDynamicProxy(
                                context.getBean(TxPlain.class)))
                .isTrue();
        context.getBean(TxOnInterface.class).run();
        CLOCK_OFFSET.set(0);
        context.getBean(TxPlain.class).run();
        assertThat(BODIES_PAST_DEADLINE.get())
                .as("bodies started past the deadline (of %s; last %s)", BODIES.get(), LAST.get())
                .isZero();
        assertThat(BODIES.get()).isZero();
    }
}
