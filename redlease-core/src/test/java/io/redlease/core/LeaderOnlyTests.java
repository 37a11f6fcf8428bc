package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** {@code @LeaderOnly} and {@link LeadershipContext} in a plain Spring context, over real Redis. */
@ExtendWith(RedisExtension.class)
class LeaderOnlyTests {

    private final Templates templates = new Templates();

    private StringRedisTemplate redis;

    private String name;

    private AnnotationConfigApplicationContext context;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        if (context != null) {
            context.close();
        }
        templates.close();
    }

    private Elector elector(String suffix) {
        return new Elector(
                redis,
                ElectorConfig.builder(name + suffix)
                        .ttl(Duration.ofSeconds(1))
                        .renewInterval(Duration.ofMillis(50))
                        .acquireInterval(Duration.ofMillis(50))
                        .build());
    }

    /** Starts a context with the main election and an extra one, "audit". */
    private AnnotationConfigApplicationContext start(Class<?>... components) {
        Elector main = elector("");
        Elector audit = elector("-audit");
        context = new AnnotationConfigApplicationContext();
        context.registerBean(
                Elections.class,
                () -> Elections.of(Map.of(Elections.DEFAULT, main, "audit", audit)));
        context.registerBean(
                LeadershipContext.class,
                () -> new LeadershipContext(context.getBean(Elections.class)));
        context.register(Infrastructure.class);
        context.register(components);
        context.refresh();
        return context;
    }

    private void lead() {
        Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
        main.start();
        await().until(main::isLeader);
    }

    private void follow() {
        redis.opsForValue().set(name + ":leader", "someone-else", Duration.ofHours(1));
        Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
        main.start();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class Infrastructure {

        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }
    }

    /** A CGLIB-proxied bean with every kind of return type. */
    static class Jobs {

        final AtomicInteger runs = new AtomicInteger();

        final AtomicReference<Fencer> fencer = new AtomicReference<>();

        final AtomicReference<String> asyncThread = new AtomicReference<>();

        LeadershipContext leadership;

        Jobs(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        // State is read through methods: a CGLIB proxy's own fields are not the target's.
        public AtomicInteger runs() {
            return runs;
        }

        public AtomicReference<Fencer> fencer() {
            return fencer;
        }

        public AtomicReference<String> asyncThread() {
            return asyncThread;
        }

        @LeaderOnly
        public void job() {
            runs.incrementAndGet();
            fencer.set(leadership.requireFencer());
        }

        @LeaderOnly
        public Optional<String> optional() {
            return Optional.of("ran");
        }

        @LeaderOnly
        public String reference() {
            return "ran";
        }

        @LeaderOnly
        public Integer boxed() {
            return 1;
        }

        @LeaderOnly(whenNotLeader = WhenNotLeader.REJECT)
        public String rejecting() {
            return "ran";
        }

        @LeaderOnly("audit")
        public Boolean auditLeading() {
            return leadership.election("audit").isLeader();
        }

        @Async
        @LeaderOnly
        public CompletableFuture<String> async() {
            asyncThread.set(Thread.currentThread().getName());
            return CompletableFuture.completedFuture(
                    leadership.requireFencer().token() + "@" + Thread.currentThread().getName());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class JobsConfig {

        @Bean
        Jobs jobs(LeadershipContext leadership) {
            return new Jobs(leadership);
        }
    }

    @Test
    void aLeaderRunsTheMethodWithItsTermBound() {
        start(JobsConfig.class);
        lead();
        Jobs jobs = context.getBean(Jobs.class);
        assertThat(AopUtils.isCglibProxy(jobs)).isTrue();
        jobs.job();
        assertThat(jobs.runs()).hasValue(1);
        Elector main = context.getBean(Elections.class).get("");
        assertThat(jobs.fencer().get().token()).isEqualTo(main.token().orElseThrow());
        assertThat(jobs.optional()).contains("ran");
        assertThat(jobs.reference()).isEqualTo("ran");
        assertThat(jobs.rejecting()).isEqualTo("ran");
    }

    @Test
    void aFollowerSkipsWithAValueForEachReturnType() {
        start(JobsConfig.class);
        follow();
        Jobs jobs = context.getBean(Jobs.class);
        jobs.job();
        assertThat(jobs.runs()).hasValue(0);
        assertThat(jobs.optional()).isEmpty();
        assertThat(jobs.reference()).isNull();
        assertThat(jobs.boxed()).isNull();
        assertThat(jobs.async()).succeedsWithin(Duration.ofSeconds(5)).isNull();
        assertThat(jobs.asyncThread().get()).isNull();
        assertThatExceptionOfType(NotLeaderException.class)
                .isThrownBy(jobs::rejecting)
                .withMessageContaining("rejecting runs only on the leader of '" + name + "'");
    }

    @Test
    void anotherElectionIsCheckedOnItsOwn() {
        start(JobsConfig.class);
        lead();
        Jobs jobs = context.getBean(Jobs.class);
        // Only the main election runs: "audit" is not started, so its method is skipped.
        assertThat(jobs.auditLeading()).isNull();
        Elector audit = context.getBean(Elections.class).get("audit");
        audit.start();
        await().until(audit::isLeader);
        assertThat(jobs.auditLeading()).isTrue();
    }

    @Test
    void asyncCallsAreCheckedAndBoundOnTheExecutingThread() throws Exception {
        start(JobsConfig.class);
        lead();
        Jobs jobs = context.getBean(Jobs.class);
        String result = jobs.async().get(5, TimeUnit.SECONDS);
        long token = context.getBean(Elections.class).get("").token().orElseThrow();
        assertThat(result).isEqualTo(token + "@" + jobs.asyncThread().get());
        assertThat(jobs.asyncThread().get()).isNotEqualTo(Thread.currentThread().getName());
    }

    /** A bean behind an interface gets a JDK proxy. */
    interface Reporter {
        String report();
    }

    static class DefaultReporter implements Reporter {

        @Override
        @LeaderOnly
        public String report() {
            return "report";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ReporterConfig {

        @Bean
        Reporter reporter() {
            return new DefaultReporter();
        }
    }

    @Test
    void interfaceBasedBeansWorkThroughJdkProxies() {
        start(ReporterConfig.class);
        Reporter reporter = context.getBean(Reporter.class);
        assertThat(AopUtils.isJdkDynamicProxy(reporter)).isTrue();
        assertThat(reporter.report()).isNull();
        lead();
        assertThat(reporter.report()).isEqualTo("report");
    }

    /** Leader-only on the type: every method. */
    @LeaderOnly
    static class TypeLevel {
        String one() {
            return "one";
        }
    }

    @Test
    void anAnnotatedTypeMakesEveryMethodLeaderOnly() {
        start(TypeLevel.class);
        assertThat(context.getBean(TypeLevel.class).one()).isNull();
        lead();
        assertThat(context.getBean(TypeLevel.class).one()).isEqualTo("one");
    }

    static class Primitive {
        @LeaderOnly
        public int count() {
            return 1;
        }
    }

    @Test
    void aPrimitiveReturnTypeIsRejectedAtStartup() {
        assertThatExceptionOfType(BeanCreationException.class)
                .isThrownBy(() -> start(Primitive.class))
                .withMessageContaining("returns int, but a skipped call has no value to return");
    }

    static class UnknownElection {
        @LeaderOnly("missing")
        public void work() {}
    }

    @Test
    void anUnknownElectionIsRejectedAtStartup() {
        assertThatExceptionOfType(BeanCreationException.class)
                .isThrownBy(() -> start(UnknownElection.class))
                .withMessageContaining("@LeaderOnly(\"missing\")")
                .havingRootCause()
                .isInstanceOf(UnknownElectionException.class)
                .withMessageContaining("no election 'missing' is configured; known: [");
    }

    /** A call that blocks until told to finish, recording whether it was interrupted. */
    static class Blocking {

        final CountDownLatch entered = new CountDownLatch(1);

        final CountDownLatch release = new CountDownLatch(1);

        final AtomicBoolean interrupted = new AtomicBoolean();

        public CountDownLatch entered() {
            return entered;
        }

        public CountDownLatch release() {
            return release;
        }

        public AtomicBoolean interrupted() {
            return interrupted;
        }

        @LeaderOnly
        public void interruptible() {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException ex) {
                interrupted.set(true);
            }
        }

        @LeaderOnly(interruptOnStepDown = false)
        public void uninterruptible() throws InterruptedException {
            entered.countDown();
            interrupted.set(!release.await(2, TimeUnit.SECONDS));
        }
    }

    @Test
    void theCallIsInterruptedWhenItsTermEndsAndTheThreadIsLeftClean() throws Exception {
        start(Blocking.class);
        lead();
        Blocking blocking = context.getBean(Blocking.class);
        AtomicBoolean leftInterrupted = new AtomicBoolean(true);
        Thread caller =
                new Thread(
                        () -> {
                            blocking.interruptible();
                            leftInterrupted.set(Thread.currentThread().isInterrupted());
                        });
        caller.start();
        assertThat(blocking.entered().await(5, TimeUnit.SECONDS)).isTrue();
        redis.opsForValue().set(name + ":leader", "thief", Duration.ofHours(1));
        caller.join(5000);
        assertThat(blocking.interrupted()).isTrue();
        assertThat(leftInterrupted).isFalse();
    }

    /** A leader-only method that sleeps until interrupted and restores the interrupt. */
    static class Inner {

        final CountDownLatch entered = new CountDownLatch(1);

        public CountDownLatch entered() {
            return entered;
        }

        @LeaderOnly
        public void work() {
            entered.countDown();
            try {
                // Work that lasts until the term ends and interrupts it, not a synchronisation.
                Thread.sleep(60_000);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A leader-only method that calls another one of the same election. */
    static class Outer {

        final Inner inner;

        final CompletableFuture<Boolean> sawInterrupt = new CompletableFuture<>();

        Outer(Inner inner) {
            this.inner = inner;
        }

        public CompletableFuture<Boolean> sawInterrupt() {
            return sawInterrupt;
        }

        @LeaderOnly
        public void work() {
            inner.work();
            sawInterrupt.complete(Thread.currentThread().isInterrupted());
        }
    }

    @Test
    void aNestedLeaderOnlyCallLeavesTheTermsInterruptToTheOuterMethod() throws Exception {
        start(Inner.class, Outer.class);
        lead();
        Outer outer = context.getBean(Outer.class);
        AtomicBoolean leftInterrupted = new AtomicBoolean(true);
        Thread caller =
                new Thread(
                        () -> {
                            outer.work();
                            leftInterrupted.set(Thread.currentThread().isInterrupted());
                        });
        caller.start();
        assertThat(context.getBean(Inner.class).entered().await(5, TimeUnit.SECONDS)).isTrue();
        context.getBean(Elections.class).get("").resign();
        assertThat(outer.sawInterrupt().get(10, TimeUnit.SECONDS)).isTrue();
        caller.join(5000);
        assertThat(leftInterrupted).as("the outermost call cleared it").isFalse();
    }

    @Test
    void interruptionCanBeSwitchedOff() throws Exception {
        start(Blocking.class);
        lead();
        Blocking blocking = context.getBean(Blocking.class);
        Thread caller =
                new Thread(
                        () -> {
                            try {
                                blocking.uninterruptible();
                            } catch (InterruptedException ex) {
                                blocking.interrupted().set(true);
                            }
                        });
        caller.start();
        assertThat(blocking.entered().await(5, TimeUnit.SECONDS)).isTrue();
        Elector main = context.getBean(Elections.class).get("");
        main.resign();
        await().until(() -> !main.isLeader() || main.token().orElse(0) > 1);
        blocking.release().countDown();
        caller.join(5000);
        assertThat(blocking.interrupted()).isFalse();
    }

    @Test
    void stoppingWaitsForCallsInFlightAndAdmitsNoNewOnes() throws Exception {
        start(Blocking.class);
        lead();
        Blocking blocking = context.getBean(Blocking.class);
        Elector main = context.getBean(Elections.class).get("");
        Thread caller = new Thread(blocking::interruptible);
        caller.start();
        assertThat(blocking.entered().await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> stopped = main.stopAsync();
        // Draining: the term is still active, but a new call is not admitted.
        assertThat(main.isLeader()).isTrue();
        Blocking other = context.getBean(Blocking.class);
        AtomicBoolean ran = new AtomicBoolean();
        assertThat(main.term().orElseThrow().isActive()).isTrue();
        assertThatExceptionOfType(TermEndedException.class)
                .isThrownBy(() -> main.term().orElseThrow().execute(() -> ran.getAndSet(true)));
        assertThat(ran).isFalse();
        assertThat(stopped).isNotDone();
        blocking.release().countDown();
        stopped.get(5, TimeUnit.SECONDS);
        assertThat(blocking.interrupted()).isFalse();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    /** Counts scheduled runs, which happen only while leading. */
    @EnableScheduling
    static class Scheduled10ms {

        final AtomicInteger runs = new AtomicInteger();

        public AtomicInteger runs() {
            return runs;
        }

        @Scheduled(fixedDelay = 10)
        @LeaderOnly
        public void tick() {
            runs.incrementAndGet();
        }
    }

    @Test
    void scheduledMethodsRunThroughTheCheck() throws Exception {
        start(Scheduled10ms.class);
        Scheduled10ms scheduled = context.getBean(Scheduled10ms.class);
        follow();
        // While following, many ticks are skipped (give the scheduler a window to tick).
        Thread.sleep(200);
        assertThat(scheduled.runs()).hasValue(0);
        redis.delete(name + ":leader");
        await().until(() -> scheduled.runs().get() >= 3);
    }

    @Test
    void leadershipContextOutsideACallFollowsTheElector() {
        start(JobsConfig.class);
        LeadershipContext leadership = context.getBean(LeadershipContext.class);
        assertThat(leadership.isLeader()).isFalse();
        assertThat(leadership.fencer()).isEmpty();
        assertThat(leadership.token()).isEmpty();
        assertThatExceptionOfType(NotLeaderException.class).isThrownBy(leadership::requireFencer);
        lead();
        assertThat(leadership.isLeader()).isTrue();
        assertThat(leadership.requireFencer().set(name + ":state", "v")).isTrue();
        assertThat(leadership.instanceId()).isEqualTo(leadership.elector().instanceId());
        assertThatExceptionOfType(UnknownElectionException.class)
                .isThrownBy(() -> leadership.election("nope"));
        long first = leadership.token().orElseThrow();
        leadership.resign();
        await().until(() -> leadership.token().orElse(0) > first);
    }
}
