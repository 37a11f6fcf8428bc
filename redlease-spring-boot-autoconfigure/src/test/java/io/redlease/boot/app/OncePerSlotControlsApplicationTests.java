package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
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
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Value;
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
 * Operators' controls of a once-per-slot job on the {@code redlease} endpoint, across two instances
 * over real Redis: run the current slot now on the leader (and no instance runs it again), and
 * pause / resume the job on every instance (shown by the endpoint, health and a meter), with the
 * refusals named.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotControlsApplicationTests {

    private static final Duration WAIT = TestTimeScale.scaled(Duration.ofSeconds(30));

    private static final String JOB = "controlled.tick";

    /** Every run that started: instance, slot, and when it started. */
    static final Collection<Run> RUNS = new ConcurrentLinkedQueue<>();

    record Run(String instance, Instant slot, Instant at) {}

    /** When set, a run waits on it, after counting down {@link #ENTERED}. */
    static volatile CountDownLatch HOLD;

    static volatile CountDownLatch ENTERED = new CountDownLatch(1);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class ControlledApplication {

        @Bean
        Controlled controlled(
                LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
            return new Controlled(leadership, id);
        }
    }

    static class Controlled {

        private final LeadershipContext leadership;

        private final String instance;

        Controlled(LeadershipContext leadership, String instance) {
            this.leadership = leadership;
            this.instance = instance;
        }

        @Scheduled(fixedRateString = "${test.period}")
        @LeaderOnly(oncePerSlot = true)
        public void tick() throws InterruptedException {
            Slot slot = leadership.slot().orElseThrow();
            RUNS.add(new Run(instance, slot.time(), Instant.now()));
            CountDownLatch hold = HOLD;
            if (hold != null) {
                ENTERED.countDown();
                hold.await(); // until the term ends and interrupts the run
            }
        }
    }

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-slot-controls:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        RUNS.clear();
        HOLD = null;
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, Duration period) {
        return instance(id, period, true);
    }

    private ConfigurableApplicationContext instance(String id, Duration period, boolean contend) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(ControlledApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "redlease.auto-startup=" + contend,
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms",
                                // Every missed slot would be caught up: a paused one must not be.
                                "redlease.scheduling.missed-slots=RUN_ALL",
                                "management.endpoints.web.exposure.include=redlease",
                                "management.endpoint.redlease.access=unrestricted",
                                "management.endpoint.health.show-details=always",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s",
                                "test.period=" + period.toMillis())
                        .run();
        instances.add(context);
        return context;
    }

    private static boolean leads(ConfigurableApplicationContext context) {
        return context.getBean(Elections.class).get(Elections.DEFAULT).isLeader();
    }

    private static JobControlDescriptor control(
            ConfigurableApplicationContext context, String action) {
        return context.getBean(RedleaseEndpoint.class).job("jobs", JOB, action, null);
    }

    private static List<Run> runsBy(String instance) {
        return RUNS.stream().filter(run -> run.instance().equals(instance)).toList();
    }

    private static void assertEachSlotRanOnce() {
        Map<Instant, List<Run>> bySlot =
                RUNS.stream().collect(Collectors.groupingBy(Run::slot, Collectors.toList()));
        assertThat(bySlot.values()).allSatisfy(same -> assertThat(same).hasSize(1));
    }

    @Test
    void runNowRunsTheCurrentSlotOnTheLeaderOnceAndNoInstanceRunsItAgain() {
        Duration period = Duration.ofSeconds(2);
        ConfigurableApplicationContext a = instance("a", period);
        await().atMost(WAIT).until(() -> leads(a));
        ConfigurableApplicationContext b = instance("b", period);
        await().atMost(WAIT).until(() -> !runsBy("a").isEmpty());

        // Not on a follower: refused, naming the leader.
        JobControlDescriptor onFollower = control(b, "run");
        assertThat(onFollower.outcome()).isEqualTo("refused");
        assertThat(onFollower.refusal()).isEqualTo("not leading");
        assertThat(onFollower.holder()).isEqualTo("a");
        assertThat(onFollower.changed()).isFalse();

        // On the leader: the current slot runs at once, ahead of its time, and is marked.
        List<Instant> ranNow = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Instant asked = Instant.now();
            JobControlDescriptor ran = control(a, "run");
            assertThat(ran.outcome()).isEqualTo("completed");
            assertThat(ran.refusal()).isNull();
            assertThat(ran.changed()).isTrue();
            assertThat(ran.slot()).isNotNull();
            ranNow.add(ran.slot());
            assertThat(RUNS)
                    .filteredOn(run -> run.slot().equals(ran.slot()))
                    .singleElement()
                    .satisfies(
                            run -> {
                                assertThat(run.instance()).isEqualTo("a");
                                assertThat(run.at()).isAfterOrEqualTo(asked);
                            });
        }
        assertThat(ranNow).doesNotHaveDuplicates().isSorted();
        Instant last = ranNow.get(ranNow.size() - 1);
        assertThat(
                        a.getBean(RedleaseEndpoint.class)
                                .elections()
                                .get(Elections.DEFAULT)
                                .jobs()
                                .get(0)
                                .lastCompletedSlot())
                .isEqualTo(last);

        // The leader hands over: the successor runs none of the slots run now, only later ones.
        a.close();
        instances.remove(a);
        await().atMost(WAIT).until(() -> leads(b));
        await().atMost(WAIT)
                .until(() -> runsBy("b").stream().anyMatch(run -> run.slot().isAfter(last)));
        assertThat(runsBy("b")).allSatisfy(run -> assertThat(run.slot()).isAfter(last));
        assertEachSlotRanOnce();

        // Named refusals of bad requests.
        RedleaseEndpoint endpoint = b.getBean(RedleaseEndpoint.class);
        assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.job("jobs", "controlled.nope", "run", null))
                .satisfies(ex -> assertThat(ex.getReason()).isEqualTo("unknown job"))
                .withMessageContaining("unknown job 'controlled.nope'")
                .withMessageContaining(JOB);
        assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.job("jobs", JOB, "stop", null))
                .withMessageContaining("action must be run, pause or resume, was 'stop'");
        assertThatExceptionOfType(InvalidEndpointRequestException.class)
                .isThrownBy(() -> endpoint.job("jobs", JOB, "run", 0))
                .withMessageContaining("partition must be absent");
    }

    @Test
    void aRunNowCutShortByTheEndOfItsTermLeavesItsSlotToTheSuccessor() throws Exception {
        // One slot a minute: the only runs are the first slot's and the ones asked for.
        Duration period = Duration.ofMinutes(1);
        ConfigurableApplicationContext a = instance("a", period);
        await().atMost(WAIT).until(() -> leads(a));
        await().atMost(WAIT).until(() -> runsBy("a").size() == 1);
        ConfigurableApplicationContext b = instance("b", period);

        ENTERED = new CountDownLatch(1);
        HOLD = new CountDownLatch(1);
        CompletableFuture<JobControlDescriptor> asked =
                CompletableFuture.supplyAsync(() -> control(a, "run"));
        assertThat(ENTERED.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // a's election stops mid-run: the term ends, the run is interrupted, b takes over.
        a.getBean(Elections.class).get(Elections.DEFAULT).close();
        JobControlDescriptor cut = asked.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        HOLD = null;
        assertThat(cut.outcome()).isEqualTo("failed");
        assertThat(cut.slot()).isNotNull();

        // The slot was not marked: the successor's current slot is that same one.
        await().atMost(WAIT).until(() -> leads(b));
        JobControlDescriptor again = control(b, "run");
        assertThat(again.outcome()).isEqualTo("completed");
        assertThat(again.slot()).isEqualTo(cut.slot());
        assertThat(RUNS)
                .filteredOn(run -> run.slot().equals(cut.slot()))
                .extracting(Run::instance)
                .containsExactly("a", "b");
    }

    @Test
    void runNowRacingTheScheduleOnTheLeaderRunsNoSlotTwice() {
        Duration period = Duration.ofMillis(200);
        ConfigurableApplicationContext a = instance("a", period);
        await().atMost(WAIT).until(() -> leads(a));
        instance("b", period);
        await().atMost(WAIT).until(() -> runsBy("a").size() >= 2);
        List<Instant> ranNow = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            JobControlDescriptor ran = control(a, "run");
            assertThat(ran.outcome()).isEqualTo("completed");
            ranNow.add(ran.slot());
        }
        Instant last = ranNow.get(ranNow.size() - 1);
        await().atMost(WAIT).until(() -> RUNS.stream().anyMatch(run -> run.slot().isAfter(last)));
        assertThat(ranNow).doesNotHaveDuplicates();
        assertEachSlotRanOnce();
    }

    @Test
    void pauseHoldsTheJobOnEveryInstanceAcrossAHandOverAndResumeDoesNotCatchUp() {
        Duration period = Duration.ofMillis(300);
        ConfigurableApplicationContext a = instance("a", period);
        await().atMost(WAIT).until(() -> leads(a));
        ConfigurableApplicationContext b = instance("b", period);
        await().atMost(WAIT).until(() -> runsBy("a").size() >= 2);

        // Paused from the follower, for every instance.
        JobControlDescriptor paused = control(b, "pause");
        Instant pauseRecorded = Instant.now();
        assertThat(paused.outcome()).isEqualTo("paused");
        assertThat(paused.changed()).isTrue();
        assertThat(paused.paused()).isTrue();
        Instant pausedAt = paused.pausedAt();
        assertThat(pausedAt).isNotNull();
        assertThat(control(a, "pause").changed()).as("paused again").isFalse();

        await().atMost(WAIT).until(() -> slots(a, "paused") >= 3);
        for (ConfigurableApplicationContext instance : List.of(a, b)) {
            await().atMost(WAIT).until(() -> pausedGauge(instance) == 1.0);
            await().atMost(WAIT).until(() -> pausedJobs(instance).equals(List.of(JOB)));
            RedleaseEndpoint.JobDescriptor shown =
                    instance.getBean(RedleaseEndpoint.class)
                            .elections()
                            .get(Elections.DEFAULT)
                            .jobs()
                            .get(0);
            assertThat(shown.paused()).isTrue();
            assertThat(shown.pausedAt()).isEqualTo(pausedAt);
        }
        assertThat(a.getBean(MeterRegistry.class).get("redlease.slot.lag").gauge().value())
                .as("a paused job is not behind")
                .isZero();

        JobControlDescriptor refused = control(a, "run");
        assertThat(refused.outcome()).isEqualTo("refused");
        assertThat(refused.refusal()).isEqualTo("paused");
        assertThat(refused.slot()).isNull();

        // A run whose check came before the pause was recorded may finish; none starts after it.
        assertThat(RUNS).allSatisfy(run -> assertThat(run.slot()).isBeforeOrEqualTo(pauseRecorded));

        // Still paused on the successor, which catches up nothing.
        a.close();
        instances.remove(a);
        await().atMost(WAIT).until(() -> leads(b));
        await().atMost(WAIT).until(() -> slots(b, "paused") >= 3);
        assertThat(RUNS).allSatisfy(run -> assertThat(run.slot()).isBeforeOrEqualTo(pauseRecorded));

        Instant beforeResume = Instant.now();
        JobControlDescriptor resumed = control(b, "resume");
        Instant afterResume = Instant.now();
        assertThat(resumed.outcome()).isEqualTo("resumed");
        assertThat(resumed.changed()).isTrue();
        assertThat(resumed.paused()).isFalse();
        assertThat(control(b, "resume").changed()).as("resumed again").isFalse();

        await().atMost(WAIT)
                .until(() -> runsBy("b").stream().anyMatch(run -> run.slot().isAfter(afterResume)));
        // Under RUN_ALL, the slots that came due while the job was paused are not caught up.
        assertThat(RUNS)
                .noneSatisfy(
                        run ->
                                assertThat(
                                                run.slot().isAfter(pauseRecorded)
                                                        && !run.slot().isAfter(beforeResume))
                                        .isTrue());
        assertThat(pausedGauge(b)).isZero();
        assertThat(pausedJobs(b)).isEmpty();
        assertEachSlotRanOnce();
    }

    @Test
    void slotsDueBeforeAResumeAreNotCaughtUpByTheNextLeader() {
        Duration period = Duration.ofMillis(300);
        ConfigurableApplicationContext a = instance("a", period);
        await().atMost(WAIT).until(() -> runsBy("a").size() >= 2);
        a.close();
        instances.remove(a);
        Instant lastOfA = runsBy("a").stream().map(Run::slot).max(Instant::compareTo).orElseThrow();

        // An instance that does not contend pauses and resumes the job while no one leads.
        ConfigurableApplicationContext operator = instance("operator", period, false);
        JobControlDescriptor paused = control(operator, "pause");
        assertThat(paused.changed()).isTrue();
        await().atMost(WAIT).until(() -> Instant.now().isAfter(paused.pausedAt().plusSeconds(1)));
        Instant beforeResume = Instant.now();
        assertThat(control(operator, "resume").changed()).isTrue();

        // The next leader claims the job under RUN_ALL: the slots since a's last one were due
        // before the resume, and none of them runs.
        ConfigurableApplicationContext c = instance("c", period);
        await().atMost(WAIT).until(() -> runsBy("c").size() >= 2);
        assertThat(runsBy("c")).allSatisfy(run -> assertThat(run.slot()).isAfter(beforeResume));
        assertThat(runsBy("operator")).isEmpty();
        assertThat(lastOfA).isBefore(beforeResume);
        assertThat(leads(c)).isTrue();
        assertEachSlotRanOnce();
    }

    private static double slots(ConfigurableApplicationContext context, String result) {
        Counter counter =
                context.getBean(MeterRegistry.class)
                        .find("redlease.slots")
                        .tag("redlease.job", JOB)
                        .tag("result", result)
                        .counter();
        return counter == null ? 0 : counter.count();
    }

    private static double pausedGauge(ConfigurableApplicationContext context) {
        Gauge gauge =
                context.getBean(MeterRegistry.class)
                        .find("redlease.slot.paused")
                        .tag("redlease.job", JOB)
                        .gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    @SuppressWarnings("unchecked")
    private static List<String> pausedJobs(ConfigurableApplicationContext context) {
        Map<String, Object> details =
                context.getBean(RedleaseHealthIndicator.class).health(true).getDetails();
        Function<Object, Map<String, Object>> asMap = value -> (Map<String, Object>) value;
        Object paused = asMap.apply(details.get(Elections.DEFAULT)).get("pausedJobs");
        return paused == null ? List.of() : (List<String>) paused;
    }
}
