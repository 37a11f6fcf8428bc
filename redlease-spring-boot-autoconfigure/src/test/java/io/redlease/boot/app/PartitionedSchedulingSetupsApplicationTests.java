package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Partitioned jobs in Boot applications under scheduler setups: Boot's virtual-thread scheduler
 * ({@code spring.threads.virtual.enabled=true}, Java 21 and later) across a hand-over, and
 * scheduling switched off by a property, which leaves once-per-slot jobs nothing to run them.
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class PartitionedSchedulingSetupsApplicationTests {

    private static final int PARTITIONS = 2;

    /** Every run that reached a job's body. */
    static final Queue<Ran> RUNS = new ConcurrentLinkedQueue<>();

    /**
     * A run: instance, job, partition, slot (null for the plain job), whether it ran on a virtual
     * thread, and whether the partition term bound to it was the instance's active term.
     */
    record Ran(
            String instance,
            String job,
            int partition,
            Instant slot,
            boolean virtual,
            boolean termActive) {}

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Scheduling.class)
    static class PartitionsApplication {

        @Bean
        Orders orders(LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
            return new Orders(leadership, id);
        }
    }

    /** The same application with only the plain partitioned job. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Scheduling.class)
    static class PlainApplication {

        @Bean
        PlainOrders plainOrders(LeadershipContext leadership) {
            return new PlainOrders(leadership);
        }
    }

    static class PlainOrders {

        private final LeadershipContext leadership;

        PlainOrders(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 100)
        @LeaderOnly(partitions = "orders")
        public void poll() {
            RUNS.add(new Ran("a", "poll", leadership.partition().orElseThrow(), null, false, true));
        }
    }

    /** Scheduling, unless {@code test.scheduling=false} switches it off. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "test.scheduling", matchIfMissing = true)
    @EnableScheduling
    static class Scheduling {}

    static class Orders {

        private final LeadershipContext leadership;

        private final String instance;

        Orders(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void settle() {
            record("settle");
        }

        @Scheduled(fixedRate = 100, initialDelay = 10)
        @LeaderOnly(partitions = "orders")
        public void poll() {
            record("poll");
        }

        private void record(String job) {
            int partition = leadership.partition().orElseThrow();
            long token = leadership.token().orElseThrow();
            boolean active =
                    leadership
                            .partitions("orders")
                            .term(partition)
                            .filter(Term::isActive)
                            .map(term -> term.token() == token)
                            .orElse(false);
            RUNS.add(
                    new Ran(
                            instance,
                            job,
                            partition,
                            leadership.slot().map(Slot::time).orElse(null),
                            isVirtual(Thread.currentThread()),
                            active));
        }
    }

    /** {@code Thread.isVirtual()}, called reflectively since the code is compiled for 17. */
    static boolean isVirtual(Thread thread) {
        try {
            return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
        } catch (NoSuchMethodException ex) {
            return false;
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-partition-setups:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        RUNS.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private SpringApplicationBuilder application(String id, String... more) {
        return application(PartitionsApplication.class, id, more);
    }

    private SpringApplicationBuilder application(Class<?> source, String id, String... more) {
        List<String> properties =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.auto-startup=false",
                                "redlease.partitions.orders.auto-startup=true",
                                "redlease.ttl=1s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.partitions.orders.count=" + PARTITIONS,
                                "redlease.partitions.orders.balance-interval=100ms",
                                "redlease.partitions.orders.settle=200ms",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s"));
        properties.addAll(List.of(more));
        return new SpringApplicationBuilder(source)
                .web(WebApplicationType.NONE)
                .properties(properties.toArray(String[]::new));
    }

    private ConfigurableApplicationContext instance(String id, String... more) {
        ConfigurableApplicationContext context = application(id, more).run();
        instances.add(context);
        return context;
    }

    private static PartitionedElection orders(ConfigurableApplicationContext context) {
        return context.getBean(Elections.class).partitioned("orders");
    }

    private static long runs(String instance, String job, int partition) {
        return RUNS.stream()
                .filter(
                        run ->
                                run.instance().equals(instance)
                                        && run.job().equals(job)
                                        && run.partition() == partition)
                .count();
    }

    private static void awaitRuns(String instance, int partition) {
        await().atMost(Duration.ofSeconds(15))
                .until(
                        () ->
                                runs(instance, "settle", partition) >= 2
                                        && runs(instance, "poll", partition) >= 2);
    }

    @Test
    @EnabledForJreRange(min = JRE.JAVA_21)
    void holdsPartitionJobsOnBootsVirtualThreadSchedulerAcrossAHandOver() {
        ConfigurableApplicationContext a = instance("a", "spring.threads.virtual.enabled=true");
        await().atMost(Duration.ofSeconds(10)).until(() -> orders(a).owned().size() == PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            awaitRuns("a", p);
        }
        ConfigurableApplicationContext b = instance("b", "spring.threads.virtual.enabled=true");
        await().atMost(Duration.ofSeconds(15))
                .until(() -> orders(a).owned().size() == 1 && orders(b).owned().size() == 1);
        int moved = orders(b).owned().first();
        awaitRuns("b", moved);
        // A graceful hand-over: slots continue on the new holder, none run twice.
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            List<Instant> slots =
                    RUNS.stream()
                            .filter(
                                    run ->
                                            run.job().equals("settle")
                                                    && run.partition() == partition)
                            .map(Ran::slot)
                            .toList();
            assertThat(slots).as("slots of partition %d", p).doesNotHaveDuplicates();
        }
        assertThat(RUNS).allSatisfy(run -> assertThat(run.virtual()).as("%s", run).isTrue());
        assertThat(RUNS).allSatisfy(run -> assertThat(run.termActive()).as("%s", run).isTrue());
    }

    @Test
    @EnabledForJreRange(min = JRE.JAVA_21)
    void holdsPartitionJobsOnVirtualThreadsComeBackAfterContextStopAndStart() {
        ConfigurableApplicationContext a = instance("a", "spring.threads.virtual.enabled=true");
        await().atMost(Duration.ofSeconds(10)).until(() -> orders(a).owned().size() == PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            awaitRuns("a", p);
        }
        a.stop();
        await().atMost(Duration.ofSeconds(10)).until(() -> orders(a).owned().isEmpty());
        int before = RUNS.size();
        a.start();
        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(
                        () -> {
                            List<Ran> since = RUNS.stream().skip(before).toList();
                            for (int p = 0; p < PARTITIONS; p++) {
                                int partition = p;
                                for (String job : List.of("settle", "poll")) {
                                    assertThat(
                                                    since.stream()
                                                            .filter(
                                                                    run ->
                                                                            run.partition()
                                                                                            == partition
                                                                                    && run.job()
                                                                                            .equals(
                                                                                                    job)))
                                            .as("%s runs of partition %d after the restart", job, p)
                                            .hasSizeGreaterThanOrEqualTo(2);
                                }
                            }
                        });
        assertThat(RUNS).allSatisfy(run -> assertThat(run.virtual()).as("%s", run).isTrue());
        assertThat(RUNS).allSatisfy(run -> assertThat(run.termActive()).as("%s", run).isTrue());
        for (int p = 0; p < PARTITIONS; p++) {
            int partition = p;
            assertThat(
                            RUNS.stream()
                                    .filter(
                                            run ->
                                                    run.job().equals("settle")
                                                            && run.partition() == partition)
                                    .map(Ran::slot)
                                    .toList())
                    .as("slots of partition %d", p)
                    .doesNotHaveDuplicates();
        }
    }

    @Test
    void aOncePerSlotPartitionJobIsRefusedAtStartupWhenAPropertySwitchesSchedulingOff() {
        Throwable failure = catchThrowable(() -> instance("a", "test.scheduling=false"));
        assertThat(failure)
                .as(
                        "an application with scheduling off started and owned partitions whose slots"
                                + " nothing runs")
                .isNotNull();
        StringBuilder messages = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        assertThat(messages.toString()).contains("settle()").contains("@EnableScheduling");
    }

    @Test
    void aPlainPartitionJobInAnApplicationWithSchedulingOffIsNamedInAWarning(
            CapturedOutput output) {
        ConfigurableApplicationContext a =
                application(PlainApplication.class, "a", "test.scheduling=false").run();
        instances.add(a);
        await().atMost(Duration.ofSeconds(10)).until(() -> orders(a).owned().size() == PARTITIONS);
        assertThat(output.getOut() + output.getErr())
                .as("the application owns every partition and nothing runs its @Scheduled job")
                .contains("PlainOrders.poll()")
                .contains("@EnableScheduling");
        assertThat(RUNS).isEmpty();
    }

    @Test
    void holdsTheSameApplicationWithSchedulingOnRunsEachPartitionsJobs() {
        instance("a");
        for (int p = 0; p < PARTITIONS; p++) {
            awaitRuns("a", p);
        }
        assertThat(RUNS).allSatisfy(run -> assertThat(run.termActive()).as("%s", run).isTrue());
    }
}
