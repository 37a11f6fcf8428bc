package io.redlease.boot.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.redlease.boot.logging.LeaderOnlyLogCorrelation;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of an application traced with a real OpenTelemetry SDK (spans kept in memory, every
 * trace sampled): redlease's background Redis traffic starts no trace, a leader's run is a span
 * with the documented keys and its fenced write as a child, a follower's skipped run says so, and
 * the run's election and token are in the MDC during the run only.
 */
@ExtendWith(RedisExtension.class)
class TracingApplicationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-tracing:"
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
                                "spring.application.name=traced-" + id,
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                // A short lease: the background calls of an idle minute happen in
                                // a few seconds.
                                "redlease.ttl=600ms",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=100ms",
                                "management.tracing.sampling.probability=1.0"));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TracedApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    @Test
    void idleInstancesStartNoTraceFromRedleaseTraffic() {
        List<ConfigurableApplicationContext> both = twoInstances();
        reset(both);
        double before = redisCalls(both);
        // An idle period: at least 60 background calls (acquires, renewals, heartbeats) by both.
        await().atMost(WAIT).until(() -> redisCalls(both) - before >= 60);
        double calls = redisCalls(both) - before;
        List<SpanData> strays = new ArrayList<>();
        int redisSpans = 0;
        for (ConfigurableApplicationContext context : both) {
            for (SpanData span : spans(context)) {
                if (!span.getParentSpanContext().isValid() && !expectedRoot(span)) {
                    strays.add(span);
                }
                if (isRedis(span)) {
                    redisSpans++;
                }
            }
        }
        assertThat(strays)
                .as("parentless spans over %s background Redis calls", (long) calls)
                .extracting(SpanData::getName)
                .isEmpty();
        // The client is traced: the leader's fenced writes are spans (children of its runs).
        assertThat(redisSpans).isPositive();
    }

    @Test
    void withEngineTrafficObservedTheBackgroundCallsAreRootSpans() {
        List<ConfigurableApplicationContext> both =
                twoInstances("redlease.observations.engine-traffic=true");
        reset(both);
        double before = redisCalls(both);
        await().atMost(WAIT).until(() -> redisCalls(both) - before >= 60);
        long roots =
                both.stream()
                        .flatMap(context -> spans(context).stream())
                        .filter(span -> !span.getParentSpanContext().isValid() && isRedis(span))
                        .count();
        // The mechanism the default turns off: each background call is a trace of its own.
        assertThat(roots).isGreaterThanOrEqualTo(30);
    }

    @Test
    void leaderRunIsASpanWithItsFencedWriteAsChildAndFollowerSkipSaysSo() {
        List<ConfigurableApplicationContext> both = twoInstances();
        ConfigurableApplicationContext leader = both.get(0);
        ConfigurableApplicationContext follower = both.get(1);
        long token = leader.getBean(Elector.class).token().orElseThrow();
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            List<SpanData> spans = spans(leader);
                            SpanData run =
                                    spans.stream()
                                            .filter(span -> outcome(span, "ran"))
                                            .filter(
                                                    span ->
                                                            spans.stream()
                                                                    .anyMatch(
                                                                            child ->
                                                                                    isChild(
                                                                                                    child,
                                                                                                    span)
                                                                                            && isRedis(
                                                                                                    child)))
                                            .findFirst()
                                            .orElseThrow(
                                                    () -> new AssertionError("no such span yet"));
                            assertThat(run.getName()).isEqualTo("leader-only TracedJob.tick");
                            assertThat(attribute(run, "redlease.election")).isEqualTo(name);
                            assertThat(attribute(run, "redlease.partition")).isEqualTo("none");
                            assertThat(attribute(run, "redlease.method"))
                                    .isEqualTo("TracedJob.tick");
                            assertThat(attribute(run, "redlease.token"))
                                    .isEqualTo(Long.toString(token));
                            assertThat(attribute(run, "redlease.instance")).isEqualTo("a");
                            SpanData parent =
                                    spans.stream()
                                            .filter(span -> isChild(run, span))
                                            .findFirst()
                                            .orElseThrow(
                                                    () -> new AssertionError("no such span yet"));
                            assertThat(parent.getName()).isEqualTo("task caller.call");
                        });
        await().atMost(WAIT)
                .untilAsserted(
                        () -> {
                            SpanData skipped =
                                    spans(follower).stream()
                                            .filter(span -> outcome(span, "skipped-not-leader"))
                                            .findFirst()
                                            .orElseThrow(
                                                    () -> new AssertionError("no such span yet"));
                            assertThat(skipped.getName()).isEqualTo("leader-only TracedJob.tick");
                            assertThat(attribute(skipped, "redlease.instance")).isEqualTo("b");
                            assertThat(attribute(skipped, "redlease.token")).isNull();
                            assertThat(skipped.getParentSpanContext().isValid()).isTrue();
                        });
    }

    @Test
    void runHasItsElectionAndTokenInTheMdcOnlyWhileItRuns() {
        List<ConfigurableApplicationContext> both = twoInstances();
        ConfigurableApplicationContext leader = both.get(0);
        long token = leader.getBean(Elector.class).token().orElseThrow();
        TracedApplication.TracedJob job = leader.getBean(TracedApplication.TracedJob.class);
        TracedApplication.Caller caller = leader.getBean(TracedApplication.Caller.class);
        await().atMost(WAIT).until(() -> !job.contexts().isEmpty() && !caller.after.isEmpty());
        Map<String, String> during = job.contexts().get(job.contexts().size() - 1);
        assertThat(during)
                .containsEntry(LeaderOnlyLogCorrelation.ELECTION, name)
                .containsEntry(LeaderOnlyLogCorrelation.TOKEN, Long.toString(token))
                .doesNotContainKeys(
                        LeaderOnlyLogCorrelation.PARTITION, LeaderOnlyLogCorrelation.SLOT);
        // Tracing's own keys are there too: the run's span is current.
        assertThat(during).containsKeys("traceId", "spanId");
        assertThat(caller.after.get(caller.after.size() - 1))
                .containsEntry(LeaderOnlyLogCorrelation.ELECTION, "outer")
                .doesNotContainKeys(LeaderOnlyLogCorrelation.TOKEN);
        TracedApplication.TracedJob followerJob =
                both.get(1).getBean(TracedApplication.TracedJob.class);
        assertThat(followerJob.contexts()).isEmpty();
    }

    /** Starts "a", waits for it to lead, then "b" (a follower); both with the given properties. */
    private List<ConfigurableApplicationContext> twoInstances(String... properties) {
        ConfigurableApplicationContext a = instance("a", properties);
        await().atMost(WAIT).until(() -> a.getBean(Elector.class).isLeader());
        ConfigurableApplicationContext b = instance("b", properties);
        await().atMost(WAIT)
                .until(
                        () ->
                                spans(b).stream()
                                        .anyMatch(span -> outcome(span, "skipped-not-leader")));
        return List.of(a, b);
    }

    /** Flushes and clears what both instances exported. */
    private static void reset(List<ConfigurableApplicationContext> contexts) {
        for (ConfigurableApplicationContext context : contexts) {
            spans(context);
            context.getBean(InMemorySpanExporter.class).reset();
        }
    }

    /** Returns what an instance exported, after flushing its span processors. */
    private static List<SpanData> spans(ConfigurableApplicationContext context) {
        context.getBean(SdkTracerProvider.class).forceFlush().join(10, TimeUnit.SECONDS);
        return context.getBean(InMemorySpanExporter.class).getFinishedSpanItems();
    }

    /** Counts redlease's own Redis calls (its round-trip timer) on both instances. */
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

    /** The roots an application has anyway: its scheduled tasks, and election transitions. */
    private static boolean expectedRoot(SpanData span) {
        return span.getName().startsWith("task ") || span.getName().startsWith("redlease ");
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
