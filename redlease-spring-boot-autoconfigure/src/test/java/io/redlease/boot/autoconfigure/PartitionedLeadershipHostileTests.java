package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.event.PartitionAssignedEvent;
import io.redlease.boot.event.PartitionEvent;
import io.redlease.boot.event.PartitionRevokedEvent;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

/**
 * A hostile review of partitioned leadership (issue 21) on paths the other tests do not take: runs
 * nested across the main election and a partitioned one, resigning from a run, an interrupt left by
 * a revoked run, a balancing hand-over during a run, work handed to another thread, annotation
 * shapes the startup checks must see through, and two partitioned elections on one name.
 *
 * <p>Tests named {@code holds...} show a guarantee that held under the attack; the others were
 * defects the review found, each fixed, and check the behaviour now in place.
 */
@ExtendWith(RedisExtension.class)
class PartitionedLeadershipHostileTests {

    private ApplicationContextRunner contextRunner;

    private String name;

    private RedisServer server;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-partitions-hostile:"
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

    private static PartitionedElection ownAll(
            org.springframework.context.ApplicationContext context, int count) {
        PartitionedElection orders = context.getBean(Elections.class).partitioned("orders");
        Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> orders.owned().size() == count && main.isLeader());
        return orders;
    }

    // ---------------------------------------------------------------------------------------
    // The term that the injected LeadershipContext answers for, across nested calls.
    // ---------------------------------------------------------------------------------------

    /**
     * Main {@code @LeaderOnly} tick, which runs a partitioned job, whose runs call a main
     * {@code @LeaderOnly} audit method. The audit method belongs to the main election: the injected
     * context must give it the main term's fencer. (It used to answer with the partition's: the
     * main term was bound further out, and the nested main call did not make it innermost again, so
     * the audit's fenced writes were checked against the partition's high-water mark.)
     */
    @Test
    void aMainLeaderOnlyCallInsideAPartitionRunInsideAMainCallGetsTheMainFencer() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(MainPartitionMain.class)
                .run(
                        context -> {
                            ownAll(context, 2);
                            Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
                            Fencer mainFencer = main.fencer().orElseThrow();
                            Recorder recorder = context.getBean(Recorder.class);
                            context.getBean(MainTick.class).tick();
                            assertThat(recorder.seen).hasSize(2);
                            assertThat(recorder.seen)
                                    .as(
                                            "fencer and partition() seen by a main-election"
                                                    + " @LeaderOnly method called from partition runs")
                                    .allSatisfy(
                                            seen -> {
                                                assertThat(seen.fencer()).isEqualTo(mainFencer);
                                                assertThat(seen.partition()).isEmpty();
                                            });
                        });
    }

    /**
     * A partition run calls a main {@code @LeaderOnly} method, which calls a partitioned method of
     * the same election: documented to run once "in that run's partition". Inside it {@code
     * partition()} is that partition and the context's fencer the partition's (it used to be empty
     * and the main election's, as the re-entered term did not become innermost again).
     */
    @Test
    void aPartitionedCallNestedUnderAMainCallInAPartitionRunKeepsItsPartition() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(PartitionMainPartition.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownAll(context, 2);
                            Recorder recorder = context.getBean(Recorder.class);
                            context.getBean(OuterPartitioned.class).run();
                            assertThat(recorder.seen).hasSize(2);
                            for (int partition = 0; partition < 2; partition++) {
                                Seen seen = recorder.seen.get(partition);
                                assertThat(seen.partition())
                                        .as("partition() in the nested partitioned call")
                                        .hasValue(partition);
                                assertThat(seen.fencer())
                                        .as("fencer in the nested partitioned call")
                                        .isEqualTo(orders.fencer(partition).orElseThrow());
                            }
                        });
    }

    /**
     * Inside a partition run the injected context's {@code fencer()}, {@code token()} and {@code
     * isLeader()} answer for the partition; {@code resign()} must then give up that partition (or
     * refuse), not the main election (which it used to resign).
     */
    @Test
    void resignInsideAPartitionRunResignsThatPartitionNotTheMainElection() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=1")
                .withUserConfiguration(Resigning.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownAll(context, 1);
                            Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
                            Term mainTerm = main.term().orElseThrow();
                            Term partitionTerm = orders.term(0).orElseThrow();
                            ResignJob job = context.getBean(ResignJob.class);
                            job.run();
                            assertThat(job.wasLeaderBefore()).isTrue();
                            await().atMost(Duration.ofSeconds(5))
                                    .until(() -> !mainTerm.isActive() || !partitionTerm.isActive());
                            assertThat(mainTerm.isActive())
                                    .as("main election's term after resign() in a partition run")
                                    .isTrue();
                            assertThat(partitionTerm.isActive())
                                    .as("the partition's term after resign() in its run")
                                    .isFalse();
                        });
    }

    // ---------------------------------------------------------------------------------------
    // An interrupt from a revoked partition run must not reach the next partition's run.
    // ---------------------------------------------------------------------------------------

    /**
     * The partitioned job is called from a main {@code @LeaderOnly} method (so the main term is
     * bound around the partition runs). Partition 0 is revoked during its run; the run restores the
     * interrupt as Java code should. Partition 1's run, whose term is active, starts uninterrupted
     * (it used to start interrupted: only the outermost frame clears a term's interrupt).
     */
    @Test
    void interruptOfARevokedPartitionRunIsClearedBeforeTheNextRunUnderAMainCall() throws Exception {
        interruptLeakScenario(true);
    }

    /** The same revocation without an outer main call: partition 1's run starts uninterrupted. */
    @Test
    void holdsInterruptOfARevokedPartitionRunIsClearedBeforeTheNextRunWhenCalledDirectly()
            throws Exception {
        interruptLeakScenario(false);
    }

    private void interruptLeakScenario(boolean underMainCall) {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(InterruptLeak.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownAll(context, 2);
                            BlockingJob job = context.getBean(BlockingJob.class);
                            MainAroundBlocking around = context.getBean(MainAroundBlocking.class);
                            Term revoked = orders.term(0).orElseThrow();
                            Thread caller =
                                    new Thread(underMainCall ? around::tick : job::run, "caller");
                            caller.start();
                            assertThat(job.entered().await(10, TimeUnit.SECONDS)).isTrue();
                            // Take partition 0's lease away: its next renewal fails and the term
                            // ends, interrupting its run.
                            new StringRedisTemplate(context.getBean(RedisConnectionFactory.class))
                                    .delete(orders.electionName(0) + ":leader");
                            await().atMost(Duration.ofSeconds(10)).until(() -> !revoked.isActive());
                            caller.join(10_000);
                            assertThat(caller.isAlive()).isFalse();
                            assertThat(job.events())
                                    .containsExactly(
                                            "0 interrupted by its revocation",
                                            "1 interrupted at start: false");
                        });
    }

    // ---------------------------------------------------------------------------------------
    // Balancing hand-over during a run: drain before release.
    // ---------------------------------------------------------------------------------------

    /**
     * Instance a owns both partitions and is in partition 1's run when b joins; a's share drops to
     * one, so it hands partition 1 over. The hand-over drains: b cannot win partition 1 until a's
     * run has returned, a's run writes through its fence while it still holds the lease, and b's
     * term of partition 1 has a greater token.
     */
    @Test
    void holdsBalancingHandOverDrainsTheRunningPartitionJobBeforeReleasing() throws Exception {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(HandOver.class)
                .run(
                        context -> {
                            PartitionedElection a = ownAll(context, 2);
                            SlowJob job = context.getBean(SlowJob.class);
                            long aToken = a.token(1).orElseThrow();
                            Thread caller = new Thread(job::run, "caller");
                            caller.start();
                            assertThat(job.entered().await(10, TimeUnit.SECONDS)).isTrue();
                            AtomicLong bAssignedAt = new AtomicLong();
                            AtomicLong bToken = new AtomicLong();
                            PartitionedElection b =
                                    new PartitionedElection(
                                            context.getBean(RedisConnectionFactory.class),
                                            PartitionedElectionConfig.builder(a.name(), 2)
                                                    .ttl(Duration.ofSeconds(2))
                                                    .instanceId("b")
                                                    .balanceInterval(Duration.ofMillis(50))
                                                    .settle(Duration.ofMillis(50))
                                                    .listener(
                                                            new PartitionListener() {
                                                                @Override
                                                                public void onAssigned(
                                                                        int partition, long token) {
                                                                    if (partition == 1) {
                                                                        bToken.set(token);
                                                                        bAssignedAt.set(
                                                                                System.nanoTime());
                                                                    }
                                                                }
                                                            })
                                                    .build());
                            try {
                                b.start();
                                await().atMost(Duration.ofSeconds(10))
                                        .until(() -> a.handedOver() == 1);
                                // a is draining partition 1 while its run is blocked: its lease
                                // stays, so b cannot win it during a bounded observation.
                                await().during(Duration.ofMillis(1500))
                                        .atMost(Duration.ofSeconds(3))
                                        .until(() -> !b.owns(1) && bAssignedAt.get() == 0);
                                job.release().countDown();
                                // b owns the partition once its term starts; onAssigned follows on
                                // the partition's callback lane.
                                await().atMost(Duration.ofSeconds(10))
                                        .until(() -> b.owns(1) && bAssignedAt.get() != 0);
                                caller.join(10_000);
                                assertThat(job.appliedInRun()).isTrue();
                                assertThat(job.returnedAt()).isLessThan(bAssignedAt.get());
                                assertThat(bToken.get()).isGreaterThan(aToken);
                                assertThat(a.owned()).containsExactly(0);
                            } finally {
                                b.close();
                            }
                        });
    }

    // ---------------------------------------------------------------------------------------
    // Work handed to another thread with context propagation.
    // ---------------------------------------------------------------------------------------

    /**
     * Each partition run hands work to an executor decorated with {@link
     * ContextPropagatingTaskDecorator}: the work sees that partition and its fencer, not another
     * partition's and not the main election's.
     */
    @Test
    void holdsWorkHandedToAPropagatingExecutorKeepsItsPartitionsTerm() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=3")
                .withUserConfiguration(Propagating.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownAll(context, 3);
                            Recorder recorder = context.getBean(Recorder.class);
                            context.getBean(HandsOff.class).run();
                            assertThat(recorder.seen).hasSize(3);
                            for (int partition = 0; partition < 3; partition++) {
                                int p = partition;
                                assertThat(recorder.seen)
                                        .anySatisfy(
                                                seen -> {
                                                    assertThat(seen.partition()).hasValue(p);
                                                    assertThat(seen.fencer())
                                                            .isEqualTo(
                                                                    orders.fencer(p).orElseThrow());
                                                });
                            }
                        });
    }

    // ---------------------------------------------------------------------------------------
    // Startup refusals seen through annotation shapes.
    // ---------------------------------------------------------------------------------------

    /**
     * Shapes that might slip past the startup checks: a composed annotation, an annotated interface
     * method behind a JDK proxy, a placeholder as the id. Each is refused naming the method (a
     * placeholder is not resolved, so it is refused as an unknown id rather than silently ignored).
     */
    @Test
    void holdsStartupRefusalsSeeThroughComposedAnnotationsInterfacesAndPlaceholders() {
        assertRefused(ComposedReturning.class, "return void", "composed");
        assertRefused(InterfaceReturning.class, "return void", "fromInterface");
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2", "jobs.partitions=orders")
                .withUserConfiguration(Placeholder.class)
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .hasStackTraceContaining("${jobs.partitions}")
                                        .hasStackTraceContaining(
                                                "names a partitioned election that is not"
                                                        + " configured"));
    }

    private void assertRefused(Class<?> configuration, String rule, String method) {
        contextRunner
                .withPropertyValues(
                        "redlease.partitions.orders.count=2", "spring.aop.proxy-target-class=false")
                .withUserConfiguration(configuration)
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .hasStackTraceContaining(rule)
                                        .hasStackTraceContaining(method));
    }

    // ---------------------------------------------------------------------------------------
    // Two partitioned elections on the same name.
    // ---------------------------------------------------------------------------------------

    /**
     * Two partitioned election ids configured with the same name (a copy-paste slip) share every
     * Redis key and the instance id, so each takes over the other's partitions as "its own" lease
     * and both hold a term of the same partition. Startup fails naming both properties (the context
     * used to start).
     */
    @Test
    void twoPartitionedElectionsWithTheSameNameAreRefusedNamingBothProperties() {
        contextRunner
                .withPropertyValues(
                        "redlease.partitions.orders.count=2",
                        "redlease.partitions.orders.name=" + name + "-shared",
                        "redlease.partitions.invoices.count=2",
                        "redlease.partitions.invoices.name=" + name + "-shared")
                .run(
                        context ->
                                assertThat(context)
                                        .as(
                                                "a context with redlease.partitions.orders and"
                                                        + " .invoices on one name")
                                        .hasFailed()
                                        .getFailure()
                                        .hasStackTraceContaining("redlease.partitions.orders.name")
                                        .hasStackTraceContaining(
                                                "redlease.partitions.invoices.name"));
    }

    // ---------------------------------------------------------------------------------------
    // Child contexts.
    // ---------------------------------------------------------------------------------------

    /**
     * A child context with auto-configuration (SpringApplicationBuilder.child) finds the parent's
     * Elections, and closing the child leaves the parent's partitioned election and main elector
     * alone. (The child used to get a PartitionsLifecycle and a RedleaseLifecycle of its own over
     * the parent's Elections, and closing it stopped the parent's elections.)
     */
    @Test
    void closingAChildContextLeavesTheParentsElectionsRunning() {
        SpringApplicationBuilder parent =
                new SpringApplicationBuilder(ParentApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name={" + name + "}",
                                "redlease.ttl=2s",
                                "redlease.instance-id=a",
                                "redlease.partitions.orders.count=2",
                                "redlease.partitions.orders.balance-interval=50ms",
                                "redlease.partitions.orders.settle=50ms");
        ConfigurableApplicationContext child =
                parent.child(ChildApplication.class).web(WebApplicationType.NONE).run();
        ConfigurableApplicationContext parentContext =
                (ConfigurableApplicationContext) child.getParent();
        try {
            PartitionedElection orders = ownAll(parentContext, 2);
            Elector main = parentContext.getBean(Elections.class).get(Elections.DEFAULT);
            child.close();
            assertThat(parentContext.isActive()).isTrue();
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(orders.isRunning())
                    .as("the parent's partitioned election after the child closed")
                    .isTrue();
            softly.assertThat(orders.owned())
                    .as("the parent's owned partitions after the child closed")
                    .hasSize(2);
            // The main election (RedleaseLifecycle) had the same defect.
            softly.assertThat(main.isRunning())
                    .as("the parent's main elector after the child closed")
                    .isTrue();
            softly.assertAll();
        } finally {
            child.close();
            parentContext.close();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Events: in order per partition, revoke carries the assigned term's token.
    // ---------------------------------------------------------------------------------------

    /**
     * Instance a owns three partitions, b joins (a hands one over), then a's context closes (a
     * hands the rest over). Per partition, a's events alternate assigned/revoked, each revoke
     * carries the token of the assignment before it, and tokens of a partition strictly increase
     * across a's and b's terms.
     */
    @Test
    void holdsPartitionEventsAlternatePerPartitionWithTheTermsToken() {
        List<PartitionEvent> events = new CopyOnWriteArrayList<>();
        List<long[]> bAssigned = new CopyOnWriteArrayList<>();
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=3")
                .withBean(
                        "eventRecorder",
                        ApplicationListener.class,
                        () ->
                                (ApplicationListener<ApplicationEvent>)
                                        event -> {
                                            if (event instanceof PartitionEvent partition) {
                                                events.add(partition);
                                            }
                                        })
                .run(
                        context -> {
                            PartitionedElection a = ownAll(context, 3);
                            // b has a connection of its own: stopping a's context stops a's.
                            LettuceConnectionFactory bConnections =
                                    new LettuceConnectionFactory(server.host(), server.port());
                            bConnections.afterPropertiesSet();
                            bConnections.start();
                            PartitionedElection b =
                                    new PartitionedElection(
                                            bConnections,
                                            PartitionedElectionConfig.builder(a.name(), 3)
                                                    .ttl(Duration.ofSeconds(2))
                                                    .instanceId("b")
                                                    .balanceInterval(Duration.ofMillis(50))
                                                    .settle(Duration.ofMillis(50))
                                                    .listener(
                                                            new PartitionListener() {
                                                                @Override
                                                                public void onAssigned(
                                                                        int partition, long token) {
                                                                    bAssigned.add(
                                                                            new long[] {
                                                                                partition, token
                                                                            });
                                                                }
                                                            })
                                                    .build());
                            try {
                                b.start();
                                await().atMost(Duration.ofSeconds(10))
                                        .until(() -> b.owned().size() == 1);
                                context.stop();
                                await().atMost(Duration.ofSeconds(10))
                                        .untilAsserted(
                                                () ->
                                                        assertThat(b.owned())
                                                                .as(
                                                                        () ->
                                                                                "b's partitions after"
                                                                                        + " a stopped;"
                                                                                        + " holders "
                                                                                        + b
                                                                                                .holders()
                                                                                        + ", b's"
                                                                                        + " members "
                                                                                        + b
                                                                                                .members()
                                                                                        + ", b's"
                                                                                        + " share "
                                                                                        + b.share())
                                                                .hasSize(3));
                                // Revocations are published after the release, on the lanes.
                                await().atMost(Duration.ofSeconds(10))
                                        .until(
                                                () ->
                                                        events.stream()
                                                                        .filter(
                                                                                PartitionRevokedEvent
                                                                                                .class
                                                                                        ::isInstance)
                                                                        .count()
                                                                == events.stream()
                                                                        .filter(
                                                                                PartitionAssignedEvent
                                                                                                .class
                                                                                        ::isInstance)
                                                                        .count());
                            } finally {
                                b.close();
                                bConnections.destroy();
                            }
                        });
        for (int partition = 0; partition < 3; partition++) {
            int p = partition;
            List<PartitionEvent> mine = events.stream().filter(e -> e.getPartition() == p).toList();
            assertThat(mine).as("a's events of partition %d", p).hasSizeGreaterThanOrEqualTo(2);
            assertThat(mine.size() % 2).as("a's events of partition %d come in pairs", p).isZero();
            long previous = 0;
            for (int i = 0; i < mine.size(); i += 2) {
                assertThat(mine.get(i)).isInstanceOf(PartitionAssignedEvent.class);
                assertThat(mine.get(i + 1)).isInstanceOf(PartitionRevokedEvent.class);
                assertThat(mine.get(i + 1).getToken()).isEqualTo(mine.get(i).getToken());
                assertThat(mine.get(i).getToken()).isGreaterThan(previous);
                previous = mine.get(i).getToken();
            }
            long last = previous;
            assertThat(bAssigned)
                    .filteredOn(pt -> pt[0] == p)
                    .allSatisfy(pt -> assertThat(pt[1]).isGreaterThan(last));
        }
    }

    // ---------------------------------------------------------------------------------------
    // Beans.
    // ---------------------------------------------------------------------------------------

    record Seen(Fencer fencer, OptionalInt partition) {}

    static class Recorder {

        final List<Seen> seen = new CopyOnWriteArrayList<>();

        void record(LeadershipContext leadership) {
            seen.add(new Seen(leadership.requireFencer(), leadership.partition()));
        }
    }

    /** main tick → partitioned run → main audit. */
    @Configuration(proxyBeanMethods = false)
    static class MainPartitionMain {

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        Audit audit(LeadershipContext leadership, Recorder recorder) {
            return new Audit(leadership, recorder);
        }

        @Bean
        PartitionedAudit partitionedAudit(Audit audit) {
            return new PartitionedAudit(audit);
        }

        @Bean
        MainTick mainTick(PartitionedAudit partitioned) {
            return new MainTick(partitioned);
        }
    }

    static class Audit {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        Audit(LeadershipContext leadership, Recorder recorder) {
            this.leadership = leadership;
            this.recorder = recorder;
        }

        @LeaderOnly
        public void record() {
            recorder.record(leadership);
        }
    }

    static class PartitionedAudit {

        private final Audit audit;

        PartitionedAudit(Audit audit) {
            this.audit = audit;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            audit.record();
        }
    }

    static class MainTick {

        private final PartitionedAudit partitioned;

        MainTick(PartitionedAudit partitioned) {
            this.partitioned = partitioned;
        }

        @LeaderOnly
        public void tick() {
            partitioned.run();
        }
    }

    /** partitioned run → main bridge → partitioned inner. */
    @Configuration(proxyBeanMethods = false)
    static class PartitionMainPartition {

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean
        InnerPartitioned innerPartitioned(LeadershipContext leadership, Recorder recorder) {
            return new InnerPartitioned(leadership, recorder);
        }

        @Bean
        MainBridge mainBridge(InnerPartitioned inner) {
            return new MainBridge(inner);
        }

        @Bean
        OuterPartitioned outerPartitioned(MainBridge bridge) {
            return new OuterPartitioned(bridge);
        }
    }

    static class InnerPartitioned {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        InnerPartitioned(LeadershipContext leadership, Recorder recorder) {
            this.leadership = leadership;
            this.recorder = recorder;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            recorder.record(leadership);
        }
    }

    static class MainBridge {

        private final InnerPartitioned inner;

        MainBridge(InnerPartitioned inner) {
            this.inner = inner;
        }

        @LeaderOnly
        public void call() {
            inner.run();
        }
    }

    static class OuterPartitioned {

        private final MainBridge bridge;

        OuterPartitioned(MainBridge bridge) {
            this.bridge = bridge;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            bridge.call();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Resigning {

        @Bean
        ResignJob resignJob(LeadershipContext leadership) {
            return new ResignJob(leadership);
        }
    }

    static class ResignJob {

        private final LeadershipContext leadership;

        private volatile boolean leaderBefore;

        ResignJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        public boolean wasLeaderBefore() {
            return leaderBefore;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            leaderBefore = leadership.isLeader() && leadership.partition().isPresent();
            leadership.resign();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class InterruptLeak {

        @Bean
        BlockingJob blockingJob(LeadershipContext leadership) {
            return new BlockingJob(leadership);
        }

        @Bean
        MainAroundBlocking mainAroundBlocking(BlockingJob job) {
            return new MainAroundBlocking(job);
        }
    }

    static class BlockingJob {

        final CountDownLatch entered = new CountDownLatch(1);

        final List<String> events = new CopyOnWriteArrayList<>();

        private final LeadershipContext leadership;

        BlockingJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        /** Read through the proxy: a CGLIB proxy's own fields are not the bean's. */
        public CountDownLatch entered() {
            return entered;
        }

        public List<String> events() {
            return events;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            int partition = leadership.partition().orElseThrow();
            if (partition == 0) {
                entered.countDown();
                try {
                    new CountDownLatch(1).await(30, TimeUnit.SECONDS);
                    events.add("0 not interrupted");
                } catch (InterruptedException ex) {
                    events.add("0 interrupted by its revocation");
                    Thread.currentThread().interrupt(); // restore, as Java code should
                }
            } else {
                events.add(
                        partition
                                + " interrupted at start: "
                                + Thread.currentThread().isInterrupted());
            }
        }
    }

    static class MainAroundBlocking {

        private final BlockingJob job;

        MainAroundBlocking(BlockingJob job) {
            this.job = job;
        }

        @LeaderOnly
        public void tick() {
            job.run();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HandOver {

        @Bean
        SlowJob slowJob(LeadershipContext leadership) {
            return new SlowJob(leadership);
        }
    }

    static class SlowJob {

        final CountDownLatch entered = new CountDownLatch(1);

        final CountDownLatch release = new CountDownLatch(1);

        final AtomicLong returnedAt = new AtomicLong();

        final java.util.concurrent.atomic.AtomicBoolean appliedInRun =
                new java.util.concurrent.atomic.AtomicBoolean();

        private final LeadershipContext leadership;

        SlowJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        /** Read through the proxy: a CGLIB proxy's own fields are not the bean's. */
        public CountDownLatch entered() {
            return entered;
        }

        public CountDownLatch release() {
            return release;
        }

        public long returnedAt() {
            return returnedAt.get();
        }

        public boolean appliedInRun() {
            return appliedInRun.get();
        }

        @LeaderOnly(partitions = "orders", interruptOnStepDown = false)
        public void run() {
            int partition = leadership.partition().orElseThrow();
            if (partition != 1) {
                return;
            }
            entered.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            appliedInRun.set(
                    leadership
                            .requireFencer()
                            .set(
                                    leadership.partitions("orders").electionName(1) + ":state",
                                    "written by a"));
            returnedAt.set(System.nanoTime());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Propagating {

        @Bean
        Recorder recorder() {
            return new Recorder();
        }

        @Bean(destroyMethod = "shutdown")
        ThreadPoolTaskExecutor propagatingExecutor() {
            ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
            executor.setCorePoolSize(2);
            executor.setTaskDecorator(new ContextPropagatingTaskDecorator());
            executor.initialize();
            return executor;
        }

        @Bean
        HandsOff handsOff(
                LeadershipContext leadership, Recorder recorder, ThreadPoolTaskExecutor executor) {
            return new HandsOff(leadership, recorder, executor);
        }
    }

    static class HandsOff {

        private final LeadershipContext leadership;

        private final Recorder recorder;

        private final ThreadPoolTaskExecutor executor;

        HandsOff(LeadershipContext leadership, Recorder recorder, ThreadPoolTaskExecutor executor) {
            this.leadership = leadership;
            this.recorder = recorder;
            this.executor = executor;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            Future<?> done = executor.submit(() -> recorder.record(leadership));
            try {
                done.get(10, TimeUnit.SECONDS);
            } catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        }
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @LeaderOnly(partitions = "orders")
    @interface OrdersJob {}

    @Configuration(proxyBeanMethods = false)
    static class ComposedReturning {

        @Bean
        Object composedReturning() {
            return new Object() {
                @OrdersJob
                public Optional<String> composed() {
                    return Optional.empty();
                }
            };
        }
    }

    interface Reporting {

        @LeaderOnly(partitions = "orders")
        String fromInterface();
    }

    @Configuration(proxyBeanMethods = false)
    static class InterfaceReturning {

        @Bean
        Reporting interfaceReturning() {
            return new ReportingImpl();
        }
    }

    static class ReportingImpl implements Reporting {

        @Override
        public String fromInterface() {
            return "x";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Placeholder {

        @Bean
        Object placeholder() {
            return new Object() {
                @LeaderOnly(partitions = "${jobs.partitions}")
                public void run() {}
            };
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ParentApplication {}

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ChildApplication {}
}
