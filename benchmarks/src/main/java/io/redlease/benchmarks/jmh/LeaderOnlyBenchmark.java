package io.redlease.benchmarks.jmh;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.aopalliance.intercept.MethodInterceptor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.core.publisher.Mono;

/**
 * The cost of the {@code @LeaderOnly} interception per call, with the proxy created the way an
 * application gets it ({@link LeaderOnlyAnnotationBeanPostProcessor} in a Spring context):
 *
 * <ul>
 *   <li>{@code direct}: the bean's method without a proxy;
 *   <li>{@code passThroughProxy}: a CGLIB proxy whose only advice calls {@code proceed()}, to
 *       separate the proxy's own cost;
 *   <li>{@code leading}: {@code @LeaderOnly} while this instance leads (the call runs bound to the
 *       term);
 *   <li>{@code notLeading}: {@code @LeaderOnly} on an election this instance does not lead (the
 *       call is skipped);
 *   <li>{@code directMono}, {@code leadingMono}, {@code notLeadingMono}: the same for a method that
 *       returns a {@code Mono}, subscribed and awaited: the check runs at subscription, and a
 *       leader's subscription runs inside its term ({@code Term.executeReactive}).
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class LeaderOnlyBenchmark {

    private RedisServer redis;

    private LettuceConnectionFactory factory;

    private Elector leading;

    private Elector following;

    private GenericApplicationContext context;

    private Job direct;

    private Job passThrough;

    private Job proxied;

    /** The bean under test; its work is trivial so the interception dominates. */
    public static class Job {

        private long runs;

        @LeaderOnly
        public Long tick() {
            return ++runs;
        }

        @LeaderOnly("other")
        public Long tickOther() {
            return ++runs;
        }

        @LeaderOnly
        public Mono<Long> tickMono() {
            return Mono.fromSupplier(() -> ++runs);
        }

        @LeaderOnly("other")
        public Mono<Long> tickMonoOther() {
            return Mono.fromSupplier(() -> ++runs);
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException {
        redis = BenchRedis.start();
        factory = BenchRedis.lettuce(redis.port());
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        leading = new Elector(template, ElectorConfig.builder("jmh-leader-only").build());
        following = new Elector(template, ElectorConfig.builder("jmh-not-started").build());
        leading.start();
        Leadership.await(leading, Duration.ofSeconds(10));
        Elections elections = Elections.of(Map.of(Elections.DEFAULT, leading, "other", following));
        context = new GenericApplicationContext();
        context.registerBean(Elections.class, () -> elections);
        context.registerBean(LeaderOnlyAnnotationBeanPostProcessor.class);
        context.registerBean(Job.class);
        context.refresh();
        proxied = context.getBean(Job.class);
        direct = new Job();
        ProxyFactory proxyFactory = new ProxyFactory(new Job());
        proxyFactory.setProxyTargetClass(true);
        proxyFactory.addAdvice((MethodInterceptor) invocation -> invocation.proceed());
        passThrough = (Job) proxyFactory.getProxy();
        if (proxied.tick() == null
                || proxied.tickOther() != null
                || proxied.tickMono().block() == null
                || proxied.tickMonoOther().block() != null) {
            throw new IllegalStateException("@LeaderOnly is not applied as expected");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        context.close();
        leading.stop();
        factory.destroy();
        redis.close();
    }

    @Benchmark
    public Long direct() {
        return direct.tick();
    }

    @Benchmark
    public Long passThroughProxy() {
        return passThrough.tick();
    }

    @Benchmark
    public Long leading() {
        return proxied.tick();
    }

    @Benchmark
    public Long notLeading() {
        return proxied.tickOther();
    }

    @Benchmark
    public Long directMono() {
        return direct.tickMono().block();
    }

    @Benchmark
    public Long leadingMono() {
        return proxied.tickMono().block();
    }

    @Benchmark
    public Long notLeadingMono() {
        return proxied.tickMonoOther().block();
    }
}
