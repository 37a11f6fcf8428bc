package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.task.support.ContextPropagatingTaskDecorator;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A partition run's term follows its work to other threads, as an ordinary term does: tasks
 * decorated with {@link ContextPropagatingTaskDecorator} and Reactor operators under automatic
 * context propagation see the run's partition and write through its fencer; work that outlives the
 * term is refused once a later term of the partition exists.
 */
@ExtendWith(RedisExtension.class)
class PartitionContextPropagationTests {

    private final Templates templates = new Templates();

    private StringRedisTemplate redis;

    private String name;

    private PartitionedElection orders;

    private Elector main;

    private AnnotationConfigApplicationContext context;

    private ThreadPoolTaskExecutor executor;

    /**
     * What the work saw; read here, not through the bean's proxy (whose fields are not its own).
     */
    private final Observed observed = new Observed();

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        Hooks.enableAutomaticContextPropagation();
        orders =
                new PartitionedElection(
                        redis,
                        PartitionedElectionConfig.builder(name + ":orders", 2)
                                .instanceId("a")
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(100))
                                .balanceInterval(Duration.ofMillis(50))
                                .settle(Duration.ofMillis(50))
                                .build());
        main = new Elector(redis, ElectorConfig.builder(name).instanceId("a").build());
        executor = new ThreadPoolTaskExecutor();
        executor.setCorePoolSize(2);
        executor.setThreadNamePrefix("propagated-");
        executor.setTaskDecorator(new ContextPropagatingTaskDecorator());
        executor.initialize();
        Elections elections =
                Elections.of(Map.of(Elections.DEFAULT, main), Map.of("orders", orders));
        LeadershipContext leadership = new LeadershipContext(elections);
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Elections.class, () -> elections);
        context.registerBean(
                LeaderOnlyAnnotationBeanPostProcessor.class,
                LeaderOnlyAnnotationBeanPostProcessor::new);
        context.registerBean(Work.class, () -> new Work(leadership, executor, name, observed));
        context.refresh();
        orders.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> orders.owned().size() == 2);
    }

    @AfterEach
    void tearDown() {
        Hooks.disableAutomaticContextPropagation();
        context.close();
        executor.shutdown();
        orders.close();
        main.close();
        templates.close();
    }

    @Test
    void aPartitionRunsTermIsSeenOnPropagatedThreadsAndItsFencedWritesLand() throws Exception {
        context.getBean(Work.class).run();
        assertThat(observed.seen)
                .containsExactlyInAnyOrder(
                        "pool 0 " + orders.token(0).orElseThrow() + " true",
                        "reactor 0 " + orders.token(0).orElseThrow() + " true",
                        "pool 1 " + orders.token(1).orElseThrow() + " true",
                        "reactor 1 " + orders.token(1).orElseThrow() + " true");
        assertThat(redis.opsForValue().get(Work.key(name, 1))).isEqualTo("reactor");
    }

    @Test
    void workThatOutlivesItsPartitionsTermIsRefusedByTheFence() throws Exception {
        context.getBean(Work.class).outliving();
        long before = orders.token(0).orElseThrow();
        orders.stop();
        orders.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> orders.owned().size() == 2);
        assertThat(orders.token(0).orElseThrow()).isGreaterThan(before);
        // The new term writes first, so the fence knows a later token.
        assertThat(orders.fencer(0).orElseThrow().set(Work.key(name, 0), "new")).isTrue();
        observed.release.countDown();
        assertThat(observed.late.get(10, TimeUnit.SECONDS))
                .isEqualTo("late 0 " + before + " false");
        assertThat(redis.opsForValue().get(Work.key(name, 0))).isEqualTo("new");
    }

    static class Observed {

        final Queue<String> seen = new ConcurrentLinkedQueue<>();

        final CountDownLatch release = new CountDownLatch(1);

        final CompletableFuture<String> late = new CompletableFuture<>();
    }

    static class Work {

        private final LeadershipContext leadership;

        private final ThreadPoolTaskExecutor executor;

        private final String name;

        private final Observed observed;

        Work(
                LeadershipContext leadership,
                ThreadPoolTaskExecutor executor,
                String name,
                Observed observed) {
            this.leadership = leadership;
            this.executor = executor;
            this.name = name;
            this.observed = observed;
        }

        static String key(String name, int partition) {
            return PartitionedElection.electionName(name + ":orders", partition) + ":state";
        }

        @LeaderOnly(partitions = "orders")
        public void run() throws Exception {
            executor.submit(() -> observed.seen.add(observe("pool"))).get(10, TimeUnit.SECONDS);
            Mono.fromCallable(() -> observed.seen.add(observe("reactor")))
                    .subscribeOn(Schedulers.boundedElastic())
                    .block(Duration.ofSeconds(10));
        }

        @LeaderOnly(partitions = "orders")
        public void outliving() {
            if (leadership.partition().orElseThrow() != 0) {
                return;
            }
            executor.submit(
                    () -> {
                        try {
                            observed.release.await();
                            observed.late.complete(observe("late"));
                        } catch (Throwable ex) {
                            observed.late.completeExceptionally(ex);
                        }
                    });
        }

        private String observe(String where) {
            int partition = leadership.partition().orElseThrow();
            Fencer fencer = leadership.requireFencer();
            boolean applied = fencer.set(key(name, partition), where);
            return where + " " + partition + " " + fencer.token() + " " + applied;
        }
    }
}
