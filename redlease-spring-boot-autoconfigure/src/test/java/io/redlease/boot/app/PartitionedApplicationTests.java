package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.event.PartitionAssignedEvent;
import io.redlease.boot.event.PartitionEvent;
import io.redlease.boot.event.PartitionRevokedEvent;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.metrics.PartitionMetrics;
import io.redlease.core.Elections;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.StepDownReason;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Partitioned leadership in Boot applications: three instances share one partitioned election over
 * real Redis; a {@code @LeaderOnly(partitions)} job runs once per owned partition with that
 * partition's term bound, and a closed instance's partitions move to the others.
 */
@ExtendWith(RedisExtension.class)
class PartitionedApplicationTests {

    static final int PARTITIONS = 6;

    /** Every run of the partitioned job. */
    static final Collection<Run> RUNS = new ConcurrentLinkedQueue<>();

    /** Every partition event, with the instance that published it. */
    static final Collection<Run> AUDITS = new ConcurrentLinkedQueue<>();

    static final Collection<Event> EVENTS = new ConcurrentLinkedQueue<>();

    record Run(String instance, int partition, long token, boolean applied, long tick) {}

    record Event(String instance, PartitionEvent event) {}

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class PartitionedApplication {

        @Bean
        Orders orders(LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
            return new Orders(leadership, id);
        }

        @Bean
        Ticker ticker(Orders orders) {
            return new Ticker(orders);
        }

        @Bean
        ApplicationListener<PartitionEvent> partitionEvents(
                @Value("${redlease.instance-id}") String id) {
            return event -> EVENTS.add(new Event(id, event));
        }
    }

    /** Calls the partitioned job through its proxy on each tick, numbering the ticks. */
    static class Ticker {

        private final Orders orders;

        private long ticks;

        Ticker(Orders orders) {
            this.orders = orders;
        }

        @Scheduled(fixedDelay = 50)
        public void tick() {
            orders.process(++ticks);
        }
    }

    static class Orders {

        private final LeadershipContext leadership;

        private final String instance;

        Orders(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @LeaderOnly(partitions = "orders")
        public void process(long tick) {
            int partition = leadership.partition().orElseThrow();
            Fencer fencer = leadership.requireFencer();
            PartitionedElection orders = leadership.partitions("orders");
            String key = orders.electionName(partition) + ":state";
            boolean applied = fencer.set(key, instance + ":" + fencer.token());
            RUNS.add(new Run(instance, partition, fencer.token(), applied, tick));
        }

        /** Scheduled and partitioned on the same method. */
        @Scheduled(fixedDelay = 50)
        @LeaderOnly(partitions = "orders")
        public void audit() {
            AUDITS.add(
                    new Run(
                            instance,
                            leadership.partition().orElseThrow(),
                            leadership.token().orElseThrow(),
                            true,
                            0));
        }
    }

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-partitions-app:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        RUNS.clear();
        AUDITS.clear();
        EVENTS.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(PartitionedApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.partitions.orders.count=" + PARTITIONS,
                                "redlease.partitions.orders.balance-interval=100ms",
                                "redlease.partitions.orders.settle=200ms",
                                "management.endpoints.web.exposure.include=redlease",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s")
                        .run();
        instances.add(context);
        return context;
    }

    private static PartitionedElection orders(ConfigurableApplicationContext context) {
        return context.getBean(Elections.class).partitioned("orders");
    }

    private static String id(ConfigurableApplicationContext context) {
        return context.getEnvironment().getProperty("redlease.instance-id");
    }

    /** Waits until the instances own every partition between them, each its fair share. */
    private void awaitBalanced() {
        await().atMost(Duration.ofSeconds(15))
                .until(
                        () -> {
                            List<SortedSet<Integer>> owned =
                                    instances.stream().map(c -> orders(c).owned()).toList();
                            Set<Integer> all = new HashSet<>();
                            owned.forEach(all::addAll);
                            int sum = owned.stream().mapToInt(Set::size).sum();
                            int fair = PARTITIONS / instances.size();
                            return all.size() == PARTITIONS
                                    && sum == PARTITIONS
                                    && owned.stream().allMatch(s -> s.size() >= fair);
                        });
    }

    @Test
    void eachPartitionRunsOnItsOwnerWithItsTermAndMovesWhenAnInstanceStops() {
        instance("a");
        instance("b");
        instance("c");
        awaitBalanced();
        // Every partition runs on its owner, with the owner's current term of that partition.
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                instances.stream()
                                        .allMatch(
                                                context ->
                                                        orders(context).owned().stream()
                                                                .allMatch(
                                                                        p ->
                                                                                ranWithCurrentTerm(
                                                                                        context,
                                                                                        p))));
        assertObservable();
        ConfigurableApplicationContext leaving = instances.get(0);
        SortedSet<Integer> moved = new TreeSet<>(orders(leaving).owned());
        Map<Integer, Long> before = new java.util.HashMap<>();
        moved.forEach(p -> before.put(p, orders(leaving).token(p).orElseThrow()));
        leaving.close();
        instances.remove(leaving);
        awaitBalanced();
        // The others took the partitions over, in new terms, and run them.
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                moved.stream()
                                        .allMatch(
                                                p ->
                                                        RUNS.stream()
                                                                .anyMatch(
                                                                        run ->
                                                                                run.partition() == p
                                                                                        && !run.instance()
                                                                                                .equals(
                                                                                                        "a")
                                                                                        && run
                                                                                                        .token()
                                                                                                > before
                                                                                                        .get(
                                                                                                                p))));
        // The closed instance revoked each of its partitions on shutdown.
        Set<Integer> revokedOnClose =
                EVENTS.stream()
                        .filter(e -> e.instance().equals("a"))
                        .map(Event::event)
                        .filter(PartitionRevokedEvent.class::isInstance)
                        .map(PartitionRevokedEvent.class::cast)
                        .filter(e -> e.getReason() == StepDownReason.SHUTDOWN)
                        .map(PartitionEvent::getPartition)
                        .collect(Collectors.toSet());
        assertThat(revokedOnClose).containsAll(moved);
        assertRunsConsistent();
    }

    /** The endpoint, health and meters of each instance agree with who owns what. */
    private void assertObservable() {
        Map<Integer, String> owners = new java.util.HashMap<>();
        instances.forEach(c -> orders(c).owned().forEach(p -> owners.put(p, id(c))));
        for (ConfigurableApplicationContext context : instances) {
            PartitionedElection election = orders(context);
            RedleaseEndpoint.PartitionsDescriptor view =
                    context.getBean(RedleaseEndpoint.class).partitions("partitions", "orders");
            assertThat(view.members()).containsExactly("a", "b", "c");
            assertThat(view.owned()).containsExactlyElementsOf(election.owned());
            assertThat(view.share()).isEqualTo(PARTITIONS / 3);
            assertThat(view.holders())
                    .hasSize(PARTITIONS)
                    .allSatisfy(
                            holder ->
                                    assertThat(holder.instanceId())
                                            .isEqualTo(owners.get(holder.partition())));
            election.owned()
                    .forEach(
                            p ->
                                    assertThat(view.holders().get(p).token())
                                            .isEqualTo(election.token(p).orElseThrow()));
            assertThat(context.getBean(RedleaseEndpoint.class).partitions("partitions", "nope"))
                    .isNull();
            Map<String, Object> root = context.getBean(RedleaseEndpoint.class).root();
            assertThat(root.get("default")).isInstanceOf(RedleaseEndpoint.ElectionDescriptor.class);
            assertThat(root.get("partitions"))
                    .isEqualTo(
                            Map.of(
                                    "orders",
                                    new RedleaseEndpoint.PartitionsSummary(
                                            name + ":orders",
                                            PARTITIONS,
                                            List.of("a", "b", "c"),
                                            List.copyOf(election.owned()))));
            Health health = context.getBean(RedleaseHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> partitions =
                    (Map<String, Map<String, Object>>) health.getDetails().get("partitions");
            assertThat(partitions.get("orders"))
                    .containsEntry("owned", election.owned())
                    .containsEntry("share", PARTITIONS / 3)
                    .containsEntry("members", List.of("a", "b", "c"));
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            String tagged = name + ":orders";
            assertThat(meters.get(PartitionMetrics.OWNED).tag("name", tagged).gauge().value())
                    .isEqualTo(election.owned().size());
            assertThat(meters.get(PartitionMetrics.IMBALANCE).tag("name", tagged).gauge().value())
                    .isEqualTo(election.owned().size() - PARTITIONS / 3);
            long assignedEvents =
                    EVENTS.stream()
                            .filter(
                                    e ->
                                            e.instance().equals(id(context))
                                                    && e.event() instanceof PartitionAssignedEvent)
                            .count();
            assertThat(
                            meters.get(PartitionMetrics.MOVES)
                                    .tags("name", tagged, "direction", "assigned")
                                    .counter()
                                    .count())
                    .isEqualTo(assignedEvents)
                    .isGreaterThanOrEqualTo(election.owned().size());
        }
    }

    private boolean ranWithCurrentTerm(ConfigurableApplicationContext context, int partition) {
        long token = orders(context).token(partition).orElse(-1);
        return RUNS.stream()
                        .anyMatch(
                                run ->
                                        run.instance().equals(id(context))
                                                && run.partition() == partition
                                                && run.token() == token
                                                && run.applied())
                && AUDITS.stream()
                        .anyMatch(
                                run ->
                                        run.instance().equals(id(context))
                                                && run.partition() == partition
                                                && run.token() == token);
    }

    /**
     * Checks the history: a token of a partition ran on one instance only; one tick of an instance
     * ran each partition at most once; every assignment event's token was that partition's; and the
     * fenced state of each partition holds the newest token that wrote it.
     */
    private void assertRunsConsistent() {
        Map<String, Set<String>> instancesByTerm =
                RUNS.stream()
                        .collect(
                                Collectors.groupingBy(
                                        run -> run.partition() + "/" + run.token(),
                                        Collectors.mapping(Run::instance, Collectors.toSet())));
        assertThat(instancesByTerm.values()).allSatisfy(set -> assertThat(set).hasSize(1));
        Map<String, List<Run>> byTick =
                RUNS.stream()
                        .collect(Collectors.groupingBy(run -> run.instance() + "/" + run.tick()));
        assertThat(byTick.values())
                .allSatisfy(
                        runs ->
                                assertThat(runs.stream().map(Run::partition).toList())
                                        .doesNotHaveDuplicates());
        Set<String> assigned =
                EVENTS.stream()
                        .filter(e -> e.event() instanceof PartitionAssignedEvent)
                        .map(e -> e.event().getPartition() + "/" + e.event().getToken())
                        .collect(Collectors.toSet());
        assertThat(assigned).containsAll(instancesByTerm.keySet());
        StringRedisTemplate redis = instances.get(0).getBean(StringRedisTemplate.class);
        IntStream.range(0, PARTITIONS)
                .forEach(
                        p -> {
                            long newest =
                                    RUNS.stream()
                                            .filter(run -> run.partition() == p && run.applied())
                                            .mapToLong(Run::token)
                                            .max()
                                            .orElseThrow();
                            String state =
                                    redis.opsForValue()
                                            .get(
                                                    PartitionedElection.electionName(
                                                                    name + ":orders", p)
                                                            + ":state");
                            assertThat(state).endsWith(":" + newest);
                        });
    }
}
