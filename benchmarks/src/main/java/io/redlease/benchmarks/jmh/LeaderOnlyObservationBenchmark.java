package io.redlease.benchmarks.jmh;

import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.boot.observation.ObservedLeaderOnlyRuns;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.annotation.LeaderOnlyRunListener;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The cost of the {@code redlease.leaderonly.run} observation on a {@code @LeaderOnly} call, next
 * to {@link LeaderOnlyBenchmark}'s {@code leading} and {@code notLeading} (the same job and setup):
 *
 * <ul>
 *   <li>{@code observation=none}: no {@link LeaderOnlyRunListener} (the application has no
 *       observation registry, or {@code redlease.observations.enabled=false});
 *   <li>{@code observation=metrics}: observed, with a meter handler only (tracing off);
 *   <li>{@code observation=traced}: observed, with a meter handler and Micrometer Tracing's
 *       OpenTelemetry bridge over the OpenTelemetry SDK, every span sampled and exported to an
 *       exporter that drops it (tracing on).
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class LeaderOnlyObservationBenchmark {

    @Param({"none", "metrics", "traced"})
    public String observation;

    private RedisServer redis;

    private LettuceConnectionFactory factory;

    private Elector leading;

    private Elector following;

    private GenericApplicationContext context;

    private SdkTracerProvider tracing;

    private LeaderOnlyBenchmark.Job proxied;

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException {
        redis = BenchRedis.start();
        factory = BenchRedis.lettuce(redis.port());
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        leading = new Elector(template, ElectorConfig.builder("jmh-observed").build());
        following = new Elector(template, ElectorConfig.builder("jmh-observed-not").build());
        leading.start();
        Leadership.await(leading, Duration.ofSeconds(10));
        Elections elections = Elections.of(Map.of(Elections.DEFAULT, leading, "other", following));
        context = new GenericApplicationContext();
        context.registerBean(Elections.class, () -> elections);
        context.registerBean(LeaderOnlyAnnotationBeanPostProcessor.class);
        context.registerBean(LeaderOnlyBenchmark.Job.class);
        if (!observation.equals("none")) {
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig()
                    .observationHandler(
                            new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
            if (observation.equals("traced")) {
                tracing =
                        SdkTracerProvider.builder()
                                .addSpanProcessor(SimpleSpanProcessor.create(new Dropping()))
                                .build();
                OtelTracer tracer =
                        new OtelTracer(
                                tracing.get("jmh"), new OtelCurrentTraceContext(), event -> {});
                registry.observationConfig()
                        .observationHandler(new DefaultTracingObservationHandler(tracer));
            }
            context.registerBean(
                    LeaderOnlyRunListener.class, () -> new ObservedLeaderOnlyRuns(registry, null));
        }
        context.refresh();
        proxied = context.getBean(LeaderOnlyBenchmark.Job.class);
        if (proxied.tick() == null || proxied.tickOther() != null) {
            throw new IllegalStateException("@LeaderOnly is not applied as expected");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        context.close();
        if (tracing != null) {
            tracing.close();
        }
        leading.stop();
        factory.destroy();
        redis.close();
    }

    @Benchmark
    public Long leading() {
        return proxied.tick();
    }

    @Benchmark
    public Long notLeading() {
        return proxied.tickOther();
    }

    /** Exports nothing. */
    private static final class Dropping implements SpanExporter {

        @Override
        public CompletableResultCode export(Collection<SpanData> spans) {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
