package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.actuate.RedleaseEndpoint.JobControlDescriptor;
import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * The job controls for a once-per-slot job of a partitioned election: run now names the partition,
 * and pause / resume hold and release every partition's slots.
 */
@ExtendWith(RedisExtension.class)
class PartitionedOncePerSlotControlsApplicationTests {

    private static final Duration WAIT = TestTimeScale.scaled(Duration.ofSeconds(30));

    private static final String JOB = "orders.settle";

    static final Collection<Run> RUNS = new ConcurrentLinkedQueue<>();

    record Run(int partition, Instant slot) {}

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SettlementApplication {

        @Bean
        Orders orders(LeadershipContext leadership) {
            return new Orders(leadership);
        }
    }

    static class Orders {

        private final LeadershipContext leadership;

        Orders(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 300)
        @LeaderOnly(partitions = "orders", oncePerSlot = true)
        public void settle() {
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(new Run(leadership.partition().orElseThrow(), slot.time()));
        }
    }

    private ConfigurableApplicationContext context;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        RUNS.clear();
        context =
                new SpringApplicationBuilder(SettlementApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=redlease-partition-controls:"
                                        + info.getTestMethod().orElseThrow().getName()
                                        + ":"
                                        + System.nanoTime(),
                                "redlease.instance-id=a",
                                "redlease.ttl=1s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.partitions.orders.count=2",
                                "redlease.partitions.orders.balance-interval=100ms",
                                "redlease.partitions.orders.settle=200ms",
                                "management.endpoints.web.exposure.include=redlease",
                                "management.endpoint.redlease.access=unrestricted",
                                "management.endpoint.health.show-details=always",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s")
                        .run();
    }

    @AfterEach
    void tearDown() {
        context.close();
    }

    private boolean ranIn(int partition, Instant after) {
        return RUNS.stream()
                .anyMatch(run -> run.partition() == partition && run.slot().isAfter(after));
    }

    @Test
    void runNowNamesThePartitionAndPauseHoldsEveryPartition() {
        Instant start = Instant.now();
        await().atMost(WAIT).until(() -> ranIn(0, start) && ranIn(1, start));
        RedleaseEndpoint endpoint = context.getBean(RedleaseEndpoint.class);

        assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.job("jobs", JOB, "run", null))
                .withMessageContaining("runs in each partition of 'orders'")
                .withMessageContaining("partition must be 0 to 1, was null");
        assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.job("jobs", JOB, "run", 2))
                .withMessageContaining("partition must be 0 to 1, was 2");

        JobControlDescriptor ran = endpoint.job("jobs", JOB, "run", 1);
        assertThat(ran.outcome()).isEqualTo("completed");
        assertThat(ran.partition()).isEqualTo(1);
        assertThat(RUNS)
                .filteredOn(run -> run.slot().equals(ran.slot()))
                .contains(new Run(1, ran.slot()));
        assertThat(RUNS)
                .filteredOn(run -> run.partition() == 1 && run.slot().equals(ran.slot()))
                .hasSize(1);

        JobControlDescriptor paused = endpoint.job("jobs", JOB, "pause", null);
        Instant pauseRecorded = Instant.now();
        assertThat(paused.outcome()).isEqualTo("paused");
        Instant pausedAt = paused.pausedAt();
        assertThat(pausedAt).isNotNull();
        MeterRegistry registry = context.getBean(MeterRegistry.class);
        await().atMost(WAIT)
                .until(
                        () ->
                                registry.get("redlease.slots")
                                                .tag("redlease.job", JOB)
                                                .tag("result", "paused")
                                                .counter()
                                                .count()
                                        >= 4);
        assertThat(registry.get("redlease.slot.paused").tag("redlease.job", JOB).gauge().value())
                .isEqualTo(1.0);
        assertThat(pausedJobs()).containsExactly(JOB);
        assertThat(endpoint.job("jobs", JOB, "run", 0).refusal()).isEqualTo("paused");
        // A run whose check came before the pause was recorded may finish; none starts after it
        // (but the slot run now, ahead of its time).
        assertThat(RUNS)
                .filteredOn(run -> !run.equals(new Run(1, ran.slot())))
                .allSatisfy(run -> assertThat(run.slot()).isBeforeOrEqualTo(pauseRecorded));

        Instant resumed = Instant.now();
        assertThat(endpoint.job("jobs", JOB, "resume", null).outcome()).isEqualTo("resumed");
        await().atMost(WAIT).until(() -> ranIn(0, resumed) && ranIn(1, resumed));
        assertThat(pausedJobs()).isEmpty();
    }

    @SuppressWarnings("unchecked")
    private List<String> pausedJobs() {
        Map<String, Object> details =
                context.getBean(RedleaseHealthIndicator.class).health(true).getDetails();
        Map<String, Object> partitions = (Map<String, Object>) details.get(Elections.PARTITIONS);
        Object paused = ((Map<String, Object>) partitions.get("orders")).get("pausedJobs");
        return paused == null ? List.of() : (List<String>) paused;
    }
}
