package io.redlease.boot.observation;

import io.micrometer.common.KeyValues;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionedElection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.slf4j.MDC;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import reactor.core.publisher.Mono;

/**
 * A traced application (OpenTelemetry, spans kept in memory) with leader-only work on the paths the
 * review of the observations probes: a once-per-slot job, a job run per partition, nested calls, a
 * call that blocks until released, a method returning a stage, and a plain scheduled task that
 * shares the scheduler's one thread and notes the MDC it starts with.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
class ObservationReviewApplication {

    @Bean
    InMemorySpanExporter spanExporter() {
        return InMemorySpanExporter.create();
    }

    @Bean
    Reports reports(LeadershipContext leadership, @Value("${redlease.name}") String name) {
        return new Reports(leadership, name);
    }

    @Bean
    Bystander bystander() {
        return new Bystander();
    }

    @Bean
    Shards shards(LeadershipContext leadership) {
        return new Shards(leadership);
    }

    @Bean
    ShardTicker shardTicker(Shards shards) {
        return new ShardTicker(shards);
    }

    @Bean
    Inner inner() {
        return new Inner();
    }

    @Bean
    Outer outer(Inner inner) {
        return new Outer(inner);
    }

    @Bean
    Holder holder() {
        return new Holder();
    }

    @Bean
    Staged staged() {
        return new Staged();
    }

    @Bean
    @ConditionalOnBooleanProperty("review.conventions")
    LeaderOnlyObservationConvention reviewLeaderOnlyConvention() {
        return new DefaultLeaderOnlyObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(LeaderOnlyObservationContext context) {
                return super.getLowCardinalityKeyValues(context).and("review.custom", "run");
            }
        };
    }

    @Bean
    @ConditionalOnBooleanProperty("review.conventions")
    ElectionObservationConvention reviewElectionConvention() {
        return new DefaultElectionObservationConvention() {
            @Override
            public KeyValues getLowCardinalityKeyValues(ElectionObservationContext context) {
                return super.getLowCardinalityKeyValues(context).and("review.custom", "election");
            }
        };
    }

    /** A once-per-slot job: one fenced write per slot, and the MDC and thread it ran with. */
    static class Reports {

        final List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();

        final List<String> threads = new CopyOnWriteArrayList<>();

        public List<Map<String, String>> contexts() {
            return contexts;
        }

        public List<String> threads() {
            return threads;
        }

        private final LeadershipContext leadership;

        private final String name;

        Reports(LeadershipContext leadership, String name) {
            this.leadership = leadership;
            this.name = name;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly(oncePerSlot = true)
        public void report() {
            contexts.add(mdc());
            threads.add(Thread.currentThread().getName());
            leadership.requireFencer().set(name + ":report", leadership.instanceId());
        }
    }

    /** A plain scheduled task: the MDC and thread it starts with. */
    static class Bystander {

        final List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();

        final List<String> threads = new CopyOnWriteArrayList<>();

        public List<Map<String, String>> contexts() {
            return contexts;
        }

        public List<String> threads() {
            return threads;
        }

        @Scheduled(fixedDelay = 50)
        public void look() {
            contexts.add(mdc());
            threads.add(Thread.currentThread().getName());
        }
    }

    /** A job run once per owned partition, with a fenced write to its partition's key. */
    static class Shards {

        final List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();

        public List<Map<String, String>> contexts() {
            return contexts;
        }

        private final LeadershipContext leadership;

        Shards(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @LeaderOnly(partitions = "shards")
        public void process() {
            contexts.add(mdc());
            int partition = leadership.partition().orElseThrow();
            PartitionedElection shards = leadership.partitions("shards");
            leadership
                    .requireFencer()
                    .set(shards.electionName(partition) + ":state", leadership.instanceId());
        }
    }

    /** Calls the partitioned job every 100 ms. */
    static class ShardTicker {

        private final Shards shards;

        ShardTicker(Shards shards) {
            this.shards = shards;
        }

        @Scheduled(fixedDelay = 100)
        public void tick() {
            shards.process();
        }
    }

    /** The inner leader-only call of a nested pair: the MDC it sees. */
    static class Inner {

        final List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();

        public List<Map<String, String>> contexts() {
            return contexts;
        }

        @LeaderOnly
        public void call() {
            contexts.add(mdc());
        }
    }

    /** The outer leader-only call: the MDC before and after its inner call. */
    static class Outer {

        final List<Map<String, String>> before = new CopyOnWriteArrayList<>();

        final List<Map<String, String>> after = new CopyOnWriteArrayList<>();

        public List<Map<String, String>> before() {
            return before;
        }

        public List<Map<String, String>> after() {
            return after;
        }

        private final Inner inner;

        Outer(Inner inner) {
            this.inner = inner;
        }

        @LeaderOnly
        public void call() {
            before.add(mdc());
            inner.call();
            after.add(mdc());
        }
    }

    /** A leader-only call that runs until released. */
    static class Holder {

        final List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();

        public List<Map<String, String>> contexts() {
            return contexts;
        }

        @LeaderOnly
        public void hold(CountDownLatch entered, CountDownLatch release)
                throws InterruptedException {
            contexts.add(mdc());
            entered.countDown();
            release.await();
        }
    }

    /** Leader-only methods returning a stage and a publisher. */
    static class Staged {

        @LeaderOnly
        public CompletableFuture<String> call() {
            return CompletableFuture.completedFuture("done");
        }

        @LeaderOnly
        public Mono<String> mono() {
            return Mono.just("done");
        }
    }

    static Map<String, String> mdc() {
        Map<String, String> copy = MDC.getCopyOfContextMap();
        return copy != null ? Map.copyOf(copy) : Map.of();
    }
}
