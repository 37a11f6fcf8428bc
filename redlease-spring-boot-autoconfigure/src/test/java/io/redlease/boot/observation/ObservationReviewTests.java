package io.redlease.boot.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.redlease.boot.autoconfigure.LeaderOnlyAutoConfiguration;
import io.redlease.boot.autoconfigure.RedleaseAutoConfiguration;
import io.redlease.boot.autoconfigure.observation.RedleaseObservationAutoConfiguration;
import io.redlease.boot.logging.LeaderOnlyLogCorrelation;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.MDC;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The observation and MDC paths the other tests do not take, with a real OpenTelemetry SDK (spans
 * kept in memory, every trace sampled): once-per-slot jobs and runs per partition in an idle pair
 * of instances start no stray trace; a once-per-slot run and a partition run are spans with their
 * writes as children and their keys in the MDC, which does not outlive them on the scheduler's
 * pooled thread; nested calls from a thread with MDC values of its own; a run cut short by its
 * term's end; a method returning a stage; the off switch; users' conventions.
 */
@ExtendWith(RedisExtension.class)
class ObservationReviewTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final List<String> KEYS =
            List.of(
                    LeaderOnlyLogCorrelation.ELECTION,
                    LeaderOnlyLogCorrelation.TOKEN,
                    LeaderOnlyLogCorrelation.PARTITION,
                    LeaderOnlyLogCorrelation.SLOT);

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-observation-review:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.application.name=review-" + id,
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=600ms",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=100ms",
                                "redlease.partitions.shards.count=2",
                                "redlease.partitions.shards.balance-interval=100ms",
                                "redlease.partitions.shards.settle=200ms",
                                "spring.task.scheduling.pool.size=1",
                                "management.tracing.sampling.probability=1.0"));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(ObservationReviewApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    private ConfigurableApplicationContext leader(String... properties) {
        ConfigurableApplicationContext a = instance("a", properties);
        await().atMost(WAIT).until(() -> a.getBean(Elector.class).isLeader());
        return a;
    }

    @Test
    void idleInstancesWithOncePerSlotAndPartitionedJobsStartNoStrayTrace() {
        ConfigurableApplicationContext a = leader();
        ConfigurableApplicationContext b = instance("b");
        List<ConfigurableApplicationContext> both = List.of(a, b);
        // Both have ticked: the follower's once-per-slot job and both balancers are at work.
        await().atMost(WAIT)
                .until(
                        () ->
                                both.stream()
                                        .allMatch(
                                                context ->
                                                        !context.getBean(
                                                                        ObservationReviewApplication
                                                                                .Bystander.class)
                                                                .contexts()
                                                                .isEmpty()));
        // Idle: each owns one of the two partitions (the hand-over between them is done).
        await().atMost(WAIT)
                .until(
                        () ->
                                both.stream()
                                        .allMatch(
                                                context ->
                                                        context.getBean(Elections.class)
                                                                        .partitioned("shards")
                                                                        .owned()
                                                                        .size()
                                                                == 1));
        reset(both);
        double before = redisCalls(both);
        await().atMost(WAIT).until(() -> redisCalls(both) - before >= 60);
        assertThat(strays(both)).as("parentless spans").isEmpty();
    }

    @Test
    void oncePerSlotRunIsASpanWithItsWritesAsChildrenAndItsMdcStaysInTheRun() {
        ConfigurableApplicationContext a = leader();
        long token = a.getBean(Elector.class).token().orElseThrow();
        ObservationReviewApplication.Reports reports =
                a.getBean(ObservationReviewApplication.Reports.class);
        ObservationReviewApplication.Bystander bystander =
                a.getBean(ObservationReviewApplication.Bystander.class);
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            List<SpanData> spans = spans(a);
                            SpanData run =
                                    spans.stream()
                                            .filter(span -> outcome(span, "ran"))
                                            .filter(
                                                    span ->
                                                            span.getName()
                                                                    .equals(
                                                                            "leader-only Reports.report"))
                                            .filter(span -> redisChildren(spans, span) >= 1)
                                            .filter(span -> redisDescendants(spans, span) >= 2)
                                            .findFirst()
                                            .orElseThrow(
                                                    () -> new AssertionError("no such span yet"));
                            // The mark is a child; the job's own write is inside the run (under
                            // Spring's task observation of the method, when there is one).
                            assertThat(attribute(run, "redlease.slot")).isNotNull();
                            assertThat(attribute(run, "redlease.token"))
                                    .isEqualTo(Long.toString(token));
                        });
        Map<String, String> during = reports.contexts().get(0);
        assertThat(during)
                .containsEntry(LeaderOnlyLogCorrelation.ELECTION, name)
                .containsEntry(LeaderOnlyLogCorrelation.TOKEN, Long.toString(token))
                .containsKey(LeaderOnlyLogCorrelation.SLOT)
                .doesNotContainKey(LeaderOnlyLogCorrelation.PARTITION);
        // The job and the plain task share the scheduler's one thread: what the job's run put in
        // the MDC is gone when the next task starts on it.
        int seen = bystander.contexts().size();
        await().atMost(WAIT).until(() -> bystander.contexts().size() >= seen + 5);
        assertThat(reports.threads()).contains(bystander.threads().get(0));
        assertThat(bystander.contexts())
                .allSatisfy(context -> assertThat(context).doesNotContainKeys(keys()));
    }

    @Test
    void partitionRunIsASpanWithItsPartitionAndItsWriteAsChild() {
        ConfigurableApplicationContext a = leader();
        ObservationReviewApplication.Shards shards =
                a.getBean(ObservationReviewApplication.Shards.class);
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            List<SpanData> spans = spans(a);
                            SpanData run =
                                    spans.stream()
                                            .filter(span -> outcome(span, "ran"))
                                            .filter(
                                                    span ->
                                                            span.getName()
                                                                    .equals(
                                                                            "leader-only Shards.process"))
                                            .filter(span -> redisChildren(spans, span) >= 1)
                                            .findFirst()
                                            .orElseThrow(
                                                    () -> new AssertionError("no such span yet"));
                            assertThat(attribute(run, "redlease.partition")).isIn("0", "1");
                            assertThat(attribute(run, "redlease.election"))
                                    .isEqualTo(shardsName(a));
                            assertThat(attribute(run, "redlease.token")).isNotNull();
                            SpanData parent =
                                    spans.stream()
                                            .filter(span -> isChild(run, span))
                                            .findFirst()
                                            .orElseThrow(
                                                    () -> new AssertionError("no such span yet"));
                            assertThat(parent.getName()).isEqualTo("task shardTicker.tick");
                        });
        assertThat(shards.contexts().get(0))
                .containsEntry(LeaderOnlyLogCorrelation.ELECTION, shardsName(a))
                .containsKeys(LeaderOnlyLogCorrelation.TOKEN, LeaderOnlyLogCorrelation.PARTITION)
                .doesNotContainKey(LeaderOnlyLogCorrelation.SLOT);
    }

    @Test
    void nestedCallsNestTheirSpansAndGiveTheCallerItsMdcBack() throws Exception {
        ConfigurableApplicationContext a = leader();
        long token = a.getBean(Elector.class).token().orElseThrow();
        ObservationReviewApplication.Outer outer =
                a.getBean(ObservationReviewApplication.Outer.class);
        ObservationReviewApplication.Inner inner =
                a.getBean(ObservationReviewApplication.Inner.class);
        AtomicReference<Map<String, String>> after = new AtomicReference<>();
        Thread caller =
                new Thread(
                        () -> {
                            MDC.put(LeaderOnlyLogCorrelation.ELECTION, "caller");
                            MDC.put(LeaderOnlyLogCorrelation.TOKEN, "caller-token");
                            MDC.put("custom", "kept");
                            outer.call();
                            after.set(ObservationReviewApplication.mdc());
                            MDC.clear();
                        });
        caller.start();
        caller.join(WAIT.toMillis());
        assertThat(caller.isAlive()).isFalse();
        assertThat(after.get())
                .containsEntry(LeaderOnlyLogCorrelation.ELECTION, "caller")
                .containsEntry(LeaderOnlyLogCorrelation.TOKEN, "caller-token")
                .containsEntry("custom", "kept")
                .doesNotContainKeys(
                        LeaderOnlyLogCorrelation.PARTITION, LeaderOnlyLogCorrelation.SLOT);
        assertThat(inner.contexts().get(0))
                .containsEntry(LeaderOnlyLogCorrelation.ELECTION, name)
                .containsEntry(LeaderOnlyLogCorrelation.TOKEN, Long.toString(token))
                .containsEntry("custom", "kept");
        assertThat(outer.after().get(0)).isEqualTo(outer.before().get(0));
        List<SpanData> spans = spans(a);
        SpanData outerSpan = named(spans, "leader-only Outer.call");
        SpanData innerSpan = named(spans, "leader-only Inner.call");
        assertThat(isChild(innerSpan, outerSpan)).isTrue();
        assertThat(attribute(outerSpan, "redlease.outcome")).isEqualTo("ran");
        assertThat(attribute(innerSpan, "redlease.outcome")).isEqualTo("ran");
    }

    @Test
    void aRunCutShortByItsTermsEndIsEndedAndGivesTheCallerItsMdcBack() throws Exception {
        ConfigurableApplicationContext a = leader();
        ObservationReviewApplication.Holder holder =
                a.getBean(ObservationReviewApplication.Holder.class);
        // Alone, it owns both partitions once the hand-over is done: partitions changing hands move
        // the release subscription to a new connection, which is traced (documented).
        await().atMost(WAIT)
                .until(
                        () ->
                                a.getBean(Elections.class).partitioned("shards").owned().size()
                                        == a.getBean(Elections.class)
                                                .partitioned("shards")
                                                .partitionCount());
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Map<String, String>> after = new AtomicReference<>();
        Thread caller =
                new Thread(
                        () -> {
                            MDC.put("custom", "kept");
                            try {
                                holder.hold(entered, release);
                            } catch (Exception ex) {
                                // interrupted at the term's end: the run is cut short
                            } finally {
                                after.set(ObservationReviewApplication.mdc());
                                MDC.clear();
                            }
                        });
        caller.start();
        assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(holder.contexts().get(0)).containsKey(LeaderOnlyLogCorrelation.TOKEN);
        Elector elector = a.getBean(Elector.class);
        long token = elector.token().orElseThrow();
        reset(List.of(a));
        // The term ends during the call (its thread is interrupted); the instance, alone, wins a
        // new term at once.
        elector.resign();
        caller.join(WAIT.toMillis());
        release.countDown();
        caller.join(WAIT.toMillis());
        assertThat(caller.isAlive()).isFalse();
        assertThat(after.get()).containsEntry("custom", "kept").doesNotContainKeys(keys());
        // The release and the campaign after it start no trace either (a move of the release
        // subscription to a new connection, traced as documented, is not theirs).
        await().atMost(WAIT).until(() -> elector.token().orElse(token) != token);
        assertThat(strays(List.of(a)))
                .as("parentless spans")
                .filteredOn(
                        span ->
                                !span.startsWith("hello ")
                                        && !span.startsWith("client ")
                                        && !span.startsWith("ping ")
                                        && !span.startsWith("unsubscribe "))
                .isEmpty();
        await().atMost(WAIT)
                .untilAsserted(
                        () ->
                                assertThat(
                                                attribute(
                                                        named(spans(a), "leader-only Holder.hold"),
                                                        "redlease.outcome"))
                                        .isEqualTo("cut-short"));
    }

    @Test
    void methodsReturningAStageOrAPublisherAreObservedAlikeOnTheLeaderAndTheFollower()
            throws Exception {
        ConfigurableApplicationContext a = leader();
        ConfigurableApplicationContext b = instance("b");
        assertThat(a.getBean(ObservationReviewApplication.Staged.class).call().get())
                .isEqualTo("done");
        assertThat(b.getBean(ObservationReviewApplication.Staged.class).call().get()).isNull();
        assertThat(a.getBean(ObservationReviewApplication.Staged.class).mono().block())
                .isEqualTo("done");
        assertThat(b.getBean(ObservationReviewApplication.Staged.class).mono().block()).isNull();
        for (String method : List.of("call", "mono")) {
            long onLeader = count(spans(a), "leader-only Staged." + method);
            long onFollower = count(spans(b), "leader-only Staged." + method);
            assertThat(onFollower)
                    .as(
                            "calls of %s observed on the follower and on the leader (%s)",
                            method, onLeader)
                    .isEqualTo(onLeader);
        }
    }

    @Test
    void switchedOffThereIsNoRedleaseObservationButTheMdcStays() {
        ConfigurableApplicationContext a = leader("redlease.observations.enabled=false");
        ObservationReviewApplication.Reports reports =
                a.getBean(ObservationReviewApplication.Reports.class);
        ObservationReviewApplication.Shards shards =
                a.getBean(ObservationReviewApplication.Shards.class);
        a.getBean(ObservationReviewApplication.Outer.class).call();
        await().atMost(WAIT)
                .until(() -> reports.contexts().size() >= 2 && shards.contexts().size() >= 2);
        assertThat(reports.contexts().get(0)).containsKeys(LeaderOnlyLogCorrelation.SLOT);
        assertThat(spans(a))
                .extracting(SpanData::getName)
                .isNotEmpty()
                .noneMatch(span -> span.startsWith("leader-only ") || span.startsWith("redlease "));
        MeterRegistry registry = a.getBean(MeterRegistry.class);
        assertThat(registry.find(DefaultLeaderOnlyObservationConvention.NAME).meters()).isEmpty();
        assertThat(registry.find(DefaultElectionObservationConvention.NAME).meters()).isEmpty();
    }

    @Test
    void usersConventionsReplaceTheDefaults() {
        ConfigurableApplicationContext a = leader("review.conventions=true");
        a.getBean(ObservationReviewApplication.Outer.class).call();
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            List<SpanData> spans = spans(a);
                            assertThat(
                                            attribute(
                                                    named(spans, "leader-only Outer.call"),
                                                    "review.custom"))
                                    .isEqualTo("run");
                            assertThat(
                                            attribute(
                                                    named(spans, "redlease acquired"),
                                                    "review.custom"))
                                    .isEqualTo("election");
                        });
    }

    @Test
    void withoutAnObservationRegistryCallsAreLeaderOnlyAndCarryTheirMdc() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                DataRedisAutoConfiguration.class,
                                RedleaseAutoConfiguration.class,
                                LeaderOnlyAutoConfiguration.class,
                                RedleaseObservationAutoConfiguration.class))
                .withPropertyValues(
                        "spring.data.redis.url=" + server.url(),
                        "redlease.name=" + name,
                        "redlease.acquire-interval=100ms")
                .withBean(ObservationReviewApplication.Inner.class)
                .run(
                        context -> {
                            assertThat(context)
                                    .hasNotFailed()
                                    .doesNotHaveBean(ObservationRegistry.class)
                                    .doesNotHaveBean(ObservedLeaderOnlyRuns.class)
                                    .hasSingleBean(LeaderOnlyLogCorrelation.class);
                            Elector elector = context.getBean(Elector.class);
                            await().atMost(WAIT).until(elector::isLeader);
                            ObservationReviewApplication.Inner inner =
                                    context.getBean(ObservationReviewApplication.Inner.class);
                            inner.call();
                            assertThat(inner.contexts())
                                    .singleElement()
                                    .satisfies(
                                            mdc ->
                                                    assertThat(mdc)
                                                            .containsEntry(
                                                                    LeaderOnlyLogCorrelation
                                                                            .ELECTION,
                                                                    name)
                                                            .containsEntry(
                                                                    LeaderOnlyLogCorrelation.TOKEN,
                                                                    Long.toString(
                                                                            elector.token()
                                                                                    .orElseThrow())));
                        });
    }

    /** Returns the parentless spans the instances exported that are not expected roots. */
    private static List<String> strays(List<ConfigurableApplicationContext> contexts) {
        List<String> strays = new ArrayList<>();
        for (ConfigurableApplicationContext context : contexts) {
            for (SpanData span : spans(context)) {
                if (!span.getParentSpanContext().isValid() && !expectedRoot(span)) {
                    strays.add(
                            span.getName()
                                    + " on "
                                    + context.getEnvironment().getProperty("redlease.instance-id")
                                    + " "
                                    + span.getAttributes());
                }
            }
        }
        return strays;
    }

    private static String shardsName(ConfigurableApplicationContext context) {
        return context.getBean(Elections.class).partitioned("shards").name();
    }

    private static String[] keys() {
        return KEYS.toArray(String[]::new);
    }

    private static SpanData named(List<SpanData> spans, String name) {
        return spans.stream()
                .filter(span -> span.getName().equals(name))
                .findFirst()
                .orElseThrow(
                        () ->
                                new AssertionError(
                                        "no span "
                                                + name
                                                + " in "
                                                + spans.stream()
                                                        .map(SpanData::getName)
                                                        .collect(Collectors.toSet())));
    }

    private static long count(List<SpanData> spans, String name) {
        return spans.stream().filter(span -> span.getName().equals(name)).count();
    }

    private static long redisChildren(List<SpanData> spans, SpanData parent) {
        return spans.stream().filter(span -> isChild(span, parent) && isRedis(span)).count();
    }

    private static long redisDescendants(List<SpanData> spans, SpanData parent) {
        long count = 0;
        for (SpanData span : spans) {
            if (isChild(span, parent)) {
                count += (isRedis(span) ? 1 : 0) + redisDescendants(spans, span);
            }
        }
        return count;
    }

    private static void reset(List<ConfigurableApplicationContext> contexts) {
        for (ConfigurableApplicationContext context : contexts) {
            spans(context);
            context.getBean(InMemorySpanExporter.class).reset();
        }
    }

    private static List<SpanData> spans(ConfigurableApplicationContext context) {
        context.getBean(SdkTracerProvider.class).forceFlush().join(10, TimeUnit.SECONDS);
        return context.getBean(InMemorySpanExporter.class).getFinishedSpanItems();
    }

    private static double redisCalls(List<ConfigurableApplicationContext> contexts) {
        double count = 0;
        for (ConfigurableApplicationContext context : contexts) {
            for (Timer timer :
                    context.getBean(MeterRegistry.class)
                            .find(RedleaseMetrics.REDIS_CALLS)
                            .timers()) {
                count += timer.count();
            }
        }
        return count;
    }

    /**
     * The roots an application has anyway: its scheduled tasks, leader-only runs the scheduler
     * starts itself (once-per-slot jobs), and election transitions.
     */
    private static boolean expectedRoot(SpanData span) {
        return span.getName().startsWith("task ")
                || span.getName().startsWith("leader-only ")
                || span.getName().startsWith("redlease ");
    }

    private static boolean isRedis(SpanData span) {
        return span.getAttributes().asMap().keySet().stream()
                .anyMatch(key -> key.getKey().startsWith("db."));
    }

    private static boolean isChild(SpanData child, SpanData parent) {
        return child.getParentSpanId().equals(parent.getSpanId())
                && child.getTraceId().equals(parent.getTraceId());
    }

    private static boolean outcome(SpanData span, String outcome) {
        return outcome.equals(attribute(span, "redlease.outcome"));
    }

    private static String attribute(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.stringKey(key));
    }
}
