package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * {@code @LeaderOnly(partitions)} jobs, once per slot or not, under scheduler setups other than one
 * default {@code taskScheduler}: a second scheduler named by {@code @Scheduled(scheduler)}, two
 * schedulers with and without a primary one, a {@code SchedulingConfigurer} that installs a {@code
 * ScheduledExecutorService}, one thread shared with a long job that is not leader-only, and no
 * {@code @EnableScheduling}. Each partition's runs carry that partition's term, and its slots are
 * marked once each, on the scheduler Spring picks; a context that would never run its slots is
 * refused at startup.
 */
@ExtendWith(RedisExtension.class)
class PartitionedSchedulerSetupsTests {

    private static final int PARTITIONS = 2;

    /** Every run that reached a method's body. */
    static final Queue<Ran> RUNS = new ConcurrentLinkedQueue<>();

    /** Holds the long job that is not leader-only, when a test arms it. */
    static volatile CountDownLatch hog = new CountDownLatch(0);

    /** Counted down when the long job has started holding its thread. */
    static volatile CountDownLatch hogging = new CountDownLatch(1);

    private final Templates templates = new Templates();

    private final List<Node> nodes = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        RUNS.clear();
        hog = new CountDownLatch(0);
        hogging = new CountDownLatch(1);
    }

    @AfterEach
    void tearDown() {
        hog.countDown();
        nodes.forEach(Node::close);
        templates.close();
    }

    /**
     * A run: its job, partition and slot (null outside a once-per-slot run), its thread, and
     * whether the partition's term bound to it was this instance's active term for that partition.
     */
    record Ran(String job, int partition, Instant slot, String thread, boolean termActive) {}

    static void record(LeadershipContext leadership, String job) {
        int partition = leadership.partition().orElseThrow();
        PartitionedElection orders = leadership.partitions("orders");
        long token = leadership.token().orElseThrow();
        boolean active =
                orders.term(partition)
                        .filter(Term::isActive)
                        .map(term -> term.token() == token)
                        .orElse(false);
        RUNS.add(
                new Ran(
                        job,
                        partition,
                        leadership.slot().map(Slot::time).orElse(null),
                        Thread.currentThread().getName(),
                        active));
    }

    /** A once-per-slot job per partition and a plain partitioned job, both on "other". */
    static class OnOther {
        final LeadershipContext leadership;

        OnOther(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 200, scheduler = "other")
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void slots() {
            record(leadership, "slots");
        }

        @Scheduled(fixedDelay = 100, initialDelay = 50, scheduler = "other")
        @LeaderOnly(partitions = "orders")
        public void plain() {
            record(leadership, "plain");
        }
    }

    /** The same jobs on the default scheduler, the slots by a cron expression in a named zone. */
    static class OnDefault {
        final LeadershipContext leadership;

        OnDefault(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(cron = "*/1 * * * * *", zone = "Pacific/Chatham")
        @LeaderOnly(partitions = "orders", oncePerSlot = true, missedSlots = MissedSlots.RUN_ALL)
        public void slots() {
            record(leadership, "slots");
        }

        @Scheduled(fixedRate = 100, initialDelay = 20)
        @LeaderOnly(partitions = "orders")
        public void plain() {
            record(leadership, "plain");
        }
    }

    /** A once-per-slot job per partition on a fixed rate, beside a long job on the same thread. */
    static class SharedThread {
        final LeadershipContext leadership;

        SharedThread(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 100)
        @LeaderOnly(
                partitions = "orders",
                oncePerSlot = true,
                missedSlots = MissedSlots.RUN_ALL,
                maxCatchUp = 1000)
        public void slots() {
            record(leadership, "slots");
        }

        /** Not leader-only: runs on every instance, and holds the thread while a test arms it. */
        @Scheduled(fixedDelay = 50)
        public void housekeeping() throws InterruptedException {
            if (hog.getCount() > 0) {
                hogging.countDown();
                hog.await(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Installs its own scheduled executor for every task, as some applications do. */
    static class OwnExecutor implements SchedulingConfigurer, DisposableBean {

        final ScheduledExecutorService executor =
                Executors.newScheduledThreadPool(
                        2,
                        task -> {
                            Thread thread = new Thread(task, "own-" + COUNT.incrementAndGet());
                            thread.setDaemon(true);
                            return thread;
                        });

        static final AtomicInteger COUNT = new AtomicInteger();

        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            registrar.setScheduler(executor);
        }

        @Override
        public void destroy() {
            executor.shutdownNow();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LeaderOnlyOnly {
        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class WithScheduling {}

    /** One instance: a partitioned election "orders" of two partitions and a context. */
    final class Node implements AutoCloseable {

        final PartitionedElection election;

        final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();

        Node(
                String id,
                StringRedisTemplate redis,
                boolean scheduling,
                Consumer<AnnotationConfigApplicationContext> schedulers,
                Class<?>... components) {
            schedulers.accept(context);
            this.election =
                    new PartitionedElection(
                            redis,
                            PartitionedElectionConfig.builder(name, PARTITIONS)
                                    .instanceId(id)
                                    .ttl(Duration.ofSeconds(1))
                                    .listener(
                                            new PartitionListener() {
                                                @Override
                                                public void onAssigned(int partition, long token) {
                                                    if (context.isActive()) {
                                                        jobs().partitionListener("orders")
                                                                .onAssigned(partition, token);
                                                    }
                                                }
                                            })
                                    .build());
            Elections elections = Elections.of(Map.of(), Map.of("orders", election));
            context.registerBean(Elections.class, () -> elections);
            context.registerBean(LeadershipContext.class, () -> new LeadershipContext(elections));
            context.register(LeaderOnlyOnly.class);
            if (scheduling) {
                context.register(WithScheduling.class);
            }
            context.register(components);
        }

        Node start() {
            context.refresh();
            election.start();
            return this;
        }

        SlotJobs jobs() {
            return context.getBean(LeaderOnlyAnnotationBeanPostProcessor.class).slotJobs();
        }

        @Override
        public void close() {
            election.close();
            context.close();
        }
    }

    private Node node(
            boolean scheduling,
            Consumer<AnnotationConfigApplicationContext> schedulers,
            Class<?>... components) {
        Node node = new Node("a", redis, scheduling, schedulers, components);
        nodes.add(node);
        return node;
    }

    private static void scheduler(
            AnnotationConfigApplicationContext context, String bean, int size, boolean primary) {
        context.registerBean(
                bean,
                ThreadPoolTaskScheduler.class,
                () -> SlotInstance.scheduler(bean, Duration.ZERO, size),
                definition -> definition.setPrimary(primary));
    }

    private Map<Object, Object> ledger(Class<?> type, int partition) {
        String job = "partitionedSchedulerSetupsTests." + type.getSimpleName() + ".slots";
        return redis.opsForHash()
                .entries(PartitionedElection.electionName(name, partition) + ":slots:" + job);
    }

    private static List<Ran> runs(String job, int partition) {
        return RUNS.stream()
                .filter(run -> run.job().equals(job) && run.partition() == partition)
                .toList();
    }

    /**
     * Waits until every partition has run each job a few times and its slots are marked, then
     * checks every run had its partition's active term, ran on the expected threads, and no slot
     * ran twice.
     */
    private void assertEachPartitionRuns(Class<?> type, String threadPrefix) {
        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(
                        () -> {
                            for (int p = 0; p < PARTITIONS; p++) {
                                assertThat(runs("slots", p))
                                        .as("slot runs of %d", p)
                                        .hasSizeGreaterThan(2);
                                assertThat(runs("plain", p))
                                        .as("plain runs of %d", p)
                                        .hasSizeGreaterThan(2);
                                assertThat(ledger(type, p))
                                        .as("ledger of %d", p)
                                        .containsKey("slot");
                            }
                        });
        assertThat(RUNS).allSatisfy(run -> assertThat(run.termActive()).as("%s", run).isTrue());
        if (threadPrefix != null) {
            assertThat(RUNS)
                    .allSatisfy(
                            run -> assertThat(run.thread()).as("%s", run).startsWith(threadPrefix));
        }
        for (int p = 0; p < PARTITIONS; p++) {
            List<Instant> slots = runs("slots", p).stream().map(Ran::slot).toList();
            assertThat(slots).as("slots of partition %d", p).doesNotHaveDuplicates();
        }
    }

    @Test
    void holdsPartitionJobsNamingASecondSchedulerRunOnItWithTheirPartitionsTerm() {
        node(
                        true,
                        context -> {
                            scheduler(context, "taskScheduler", 1, false);
                            scheduler(context, "other", 2, false);
                        },
                        OnOther.class)
                .start();
        assertEachPartitionRuns(OnOther.class, "other-");
    }

    @Test
    void holdsTwoSchedulersWithoutAPrimaryOrATaskSchedulerRunEachPartitionsSlots() {
        node(
                        true,
                        context -> {
                            scheduler(context, "first", 1, false);
                            scheduler(context, "second", 1, false);
                        },
                        OnDefault.class)
                .start();
        assertEachPartitionRuns(OnDefault.class, null);
        // A cron expression in a named zone fires on whole seconds: so do its slots.
        assertThat(RUNS.stream().filter(run -> run.slot() != null))
                .allSatisfy(run -> assertThat(run.slot().toEpochMilli() % 1000).isZero());
    }

    @Test
    void holdsTwoSchedulersOneOfThemPrimaryRunEachPartitionsSlotsOnThePrimary() {
        node(
                        true,
                        context -> {
                            scheduler(context, "first", 1, false);
                            scheduler(context, "second", 2, true);
                        },
                        OnDefault.class)
                .start();
        assertEachPartitionRuns(OnDefault.class, "second-");
    }

    @Test
    void holdsAConfigurersOwnScheduledExecutorRunsEachPartitionsSlots() {
        node(
                        true,
                        context -> scheduler(context, "taskScheduler", 1, false),
                        OwnExecutor.class,
                        OnDefault.class)
                .start();
        assertEachPartitionRuns(OnDefault.class, "own-");
    }

    @Test
    void holdsSlotsDueWhileALongJobHeldTheOnlyThreadRunOnceEachAfterIt() {
        hog = new CountDownLatch(1);
        Node node =
                node(
                                true,
                                context -> scheduler(context, "taskScheduler", 1, false),
                                SharedThread.class)
                        .start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> hogging.getCount() == 0);
            int before = RUNS.size();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> node.election.owned().size() == PARTITIONS);
            // Slots come due while the thread is held: at least five per partition.
            Instant held = Instant.now();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> Instant.now().isAfter(held.plusMillis(500)));
            assertThat(RUNS).as("no run while the only thread is held").hasSize(before);
        } finally {
            hog.countDown();
        }
        Instant released = Instant.now();
        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(
                        () -> {
                            for (int p = 0; p < PARTITIONS; p++) {
                                assertThat(runs("slots", p))
                                        .as("runs of partition %d", p)
                                        .anySatisfy(
                                                run -> assertThat(run.slot()).isAfter(released));
                            }
                        });
        assertThat(RUNS).allSatisfy(run -> assertThat(run.termActive()).as("%s", run).isTrue());
        for (int p = 0; p < PARTITIONS; p++) {
            List<Instant> slots = runs("slots", p).stream().map(Ran::slot).toList();
            assertThat(slots).as("slots of partition %d", p).doesNotHaveDuplicates().isSorted();
            for (int i = 1; i < slots.size(); i++) {
                assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                        .as("partition %d ran %s", p, slots)
                        .isEqualTo(Duration.ofMillis(100));
            }
        }
    }

    /** A once-per-slot job per partition on a scheduler that does not exist. */
    static class OnMissing {
        final LeadershipContext leadership;

        OnMissing(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 200, scheduler = "missing")
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void slots() {
            record(leadership, "slots");
        }
    }

    @Test
    void holdsAOncePerSlotPartitionJobOnASchedulerThatDoesNotExistFailsStartup() {
        Node node =
                node(
                        true,
                        context -> scheduler(context, "taskScheduler", 1, false),
                        OnMissing.class);
        Throwable failure = catchThrowable(node::start);
        assertThat(failure)
                .as(
                        "a job whose @Scheduled(scheduler) names no bean started (%s runs)",
                        RUNS.size())
                .isNotNull();
        assertThat(messages(failure)).contains("missing");
    }

    @Test
    void aOncePerSlotPartitionJobInAContextThatSchedulesNothingIsRefusedAtStartup() {
        Node node =
                node(
                        false,
                        context -> scheduler(context, "taskScheduler", 1, false),
                        OnOther.class);
        Throwable failure = catchThrowable(node::start);
        assertThat(failure)
                .as(
                        "a context without @EnableScheduling never runs the once-per-slot job's"
                                + " slots, while the instance owns partitions (%s)",
                        RUNS.stream().map(Ran::job).collect(Collectors.toSet()))
                .isNotNull();
        assertThat(messages(failure)).contains("OnOther.slots").contains("@EnableScheduling");
    }

    private static String messages(Throwable failure) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            text.append(t.getMessage()).append('\n');
        }
        return text.toString();
    }
}
