package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
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
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Once-per-slot jobs in Boot applications: Spring's own scheduler (its clock skewed per instance
 * through a customizer), the starter's auto-configuration, meters and endpoint, over real Redis.
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class OncePerSlotApplicationTests {

    /** Every completed run: instance, job and slot. */
    static final Collection<Run> RUNS = new ConcurrentLinkedQueue<>();

    record Run(String instance, String job, Instant slot, boolean catchUp) {}

    /** An application with a cron job on the main election and a fixed-rate one on "audit". */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class SlotApplication {

        @Bean
        ThreadPoolTaskSchedulerCustomizer skewedClock(
                @Value("${test.clock-skew:0ms}") Duration skew) {
            return scheduler -> scheduler.setClock(Clock.offset(Clock.systemUTC(), skew));
        }

        @Bean
        Reports reports(LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
            return new Reports(leadership, id);
        }
    }

    static class Reports {

        private final LeadershipContext leadership;

        private final String instance;

        Reports(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @Scheduled(cron = "* * * * * *")
        @LeaderOnly(oncePerSlot = true)
        public void everySecond() {
            record(leadership.slot().orElseThrow());
        }

        @Scheduled(fixedRate = 500)
        @LeaderOnly(value = "audit", oncePerSlot = true)
        public void audit() {
            record(leadership.election("audit").slot().orElseThrow());
        }

        private void record(Slot slot) {
            RUNS.add(new Run(instance, slot.job(), slot.time(), slot.catchUp()));
        }
    }

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-slot-app:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        RUNS.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, Duration skew) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(SlotApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.elections.audit.name=" + name + "-audit",
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                "spring.task.scheduling.pool.size=2",
                                // A hand-off slowed down past a slot boundary drops no slot.
                                "redlease.scheduling.missed-slots=RUN_ALL",
                                "management.endpoints.web.exposure.include=redlease",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s",
                                "test.clock-skew=" + skew.toMillis() + "ms")
                        .run();
        instances.add(context);
        return context;
    }

    private List<Run> runs(String job) {
        return RUNS.stream().filter(run -> run.job().equals(job)).toList();
    }

    private static void assertEachSlotOnceWithoutGaps(List<Run> runs, Duration period) {
        Map<Instant, List<Run>> bySlot =
                runs.stream()
                        .collect(
                                Collectors.groupingBy(
                                        Run::slot, TreeMap::new, Collectors.toList()));
        assertThat(bySlot.values()).allSatisfy(same -> assertThat(same).hasSize(1));
        List<Instant> slots = new ArrayList<>(bySlot.keySet());
        for (int i = 1; i < slots.size(); i++) {
            assertThat(Duration.between(slots.get(i - 1), slots.get(i)))
                    .as("slots %s", slots)
                    .isEqualTo(period);
        }
    }

    @Test
    void slotsRunOnceAcrossGracefulShutdownsOnEachElectionWithMetersAndEndpoint() {
        ConfigurableApplicationContext a = instance("a", Duration.ZERO);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> a.getBean(Elections.class).get(Elections.DEFAULT).isLeader());
        ConfigurableApplicationContext b = instance("b", Duration.ofMillis(300));
        String[] next = {"c", "d"};
        Duration[] skews = {Duration.ofMillis(-400), Duration.ofMillis(200)};
        ConfigurableApplicationContext leader = a;
        for (int round = 0; round < 2; round++) {
            ConfigurableApplicationContext current = leader;
            String id = current.getEnvironment().getProperty("redlease.instance-id");
            await().atMost(Duration.ofSeconds(10))
                    .until(
                            () ->
                                    runs("reports.everySecond").stream()
                                                    .filter(run -> run.instance().equals(id))
                                                    .count()
                                            >= 2);
            current.close();
            instances.remove(current);
            ConfigurableApplicationContext fresh = instance(next[round], skews[round]);
            await().atMost(Duration.ofSeconds(10))
                    .until(
                            () ->
                                    instances.stream()
                                            .anyMatch(
                                                    context ->
                                                            context.getBean(Elections.class)
                                                                    .get(Elections.DEFAULT)
                                                                    .isLeader()));
            leader =
                    instances.stream()
                            .filter(
                                    context ->
                                            context.getBean(Elections.class)
                                                    .get(Elections.DEFAULT)
                                                    .isLeader())
                            .findFirst()
                            .orElseThrow();
            assertThat(fresh).isNotNull();
        }
        ConfigurableApplicationContext last = leader;
        String lastId = last.getEnvironment().getProperty("redlease.instance-id");
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                runs("reports.everySecond").stream()
                                                .filter(run -> run.instance().equals(lastId))
                                                .count()
                                        >= 2);

        assertEachSlotOnceWithoutGaps(runs("reports.everySecond"), Duration.ofSeconds(1));
        List<Run> audit = runs("reports.audit");
        assertThat(audit).isNotEmpty();
        assertThat(audit.stream().map(Run::slot).distinct()).hasSameSizeAs(audit);

        MeterRegistry registry = last.getBean(MeterRegistry.class);
        // A run is recorded above as the method runs, and counted once it is marked; a slot that
        // came due during the hand-off is counted as caught up, not run.
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(
                        () ->
                                assertThat(
                                                slotsCounted(registry, "run")
                                                        + slotsCounted(registry, "caught-up"))
                                        .isGreaterThanOrEqualTo(2));
        assertThat(
                        registry.get("redlease.slot.lag")
                                .tag("redlease.job", "reports.everySecond")
                                .gauge())
                .isNotNull();

        RedleaseEndpoint endpoint = last.getBean(RedleaseEndpoint.class);
        RedleaseEndpoint.JobDescriptor job = endpoint.elections().get("default").jobs().get(0);
        assertThat(job.job()).isEqualTo("reports.everySecond");
        assertThat(job.missedSlots()).isEqualTo("RUN_ALL");
        assertThat(job.lastCompletedSlot()).isNotNull();
        assertThat(job.nextDueSlot()).isEqualTo(job.lastCompletedSlot().plusSeconds(1));
        assertThat(endpoint.elections().get("audit").jobs())
                .singleElement()
                .satisfies(audited -> assertThat(audited.job()).isEqualTo("reports.audit"));
    }

    private static double slotsCounted(MeterRegistry registry, String result) {
        Counter counter =
                registry.find("redlease.slots")
                        .tag("redlease.job", "reports.everySecond")
                        .tag("result", result)
                        .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aBadSchedulingDefaultIsReportedAtStartupWithTheFix(CapturedOutput output) {
        assertThatException()
                .isThrownBy(
                        () ->
                                new SpringApplicationBuilder(SlotApplication.class)
                                        .web(WebApplicationType.NONE)
                                        .properties(
                                                "spring.data.redis.url=" + server.url(),
                                                "redlease.name=" + name,
                                                "redlease.elections.audit.name=" + name + "-a",
                                                "redlease.instance-id=a",
                                                "redlease.scheduling.max-catch-up=1001")
                                        .run());
        assertThat(output)
                .contains("redlease.scheduling.max-catch-up")
                .contains("Set redlease.scheduling.max-catch-up to 1 to 1000");
    }
}
