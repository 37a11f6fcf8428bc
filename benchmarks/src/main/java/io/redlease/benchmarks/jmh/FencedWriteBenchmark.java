package io.redlease.benchmarks.jmh;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Fencer;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
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
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Fenced SET / HSET (one EVALSHA each) against plain SET / HSET, on the same {@link
 * StringRedisTemplate} and so the same shared Lettuce connection, with a PING as the round-trip
 * floor. Run with 1 and 2 threads (JMH {@code -t}); the elector leads throughout and its fencer's
 * token stays current, so every fenced write is applied.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class FencedWriteBenchmark {

    private static final String KEY = "jmh-fence:value";

    private static final String HASH = "jmh-fence:hash";

    private static final String FIELD = "status";

    private static final String VALUE = "running-0123456789";

    private RedisServer redis;

    private LettuceConnectionFactory factory;

    private StringRedisTemplate template;

    private Elector elector;

    private Fencer fencer;

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException {
        redis = BenchRedis.start();
        factory = BenchRedis.lettuce(redis.port());
        template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        elector = new Elector(template, ElectorConfig.builder("jmh-fence").build());
        elector.start();
        fencer = Leadership.await(elector, Duration.ofSeconds(10));
        if (!fencer.set(KEY, VALUE)) {
            throw new IllegalStateException("fenced write refused");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        elector.stop();
        factory.destroy();
        redis.close();
    }

    @Benchmark
    public String ping() {
        return template.execute((RedisCallback<String>) RedisConnection::ping);
    }

    @Benchmark
    public void plainSet() {
        template.opsForValue().set(KEY, VALUE);
    }

    @Benchmark
    public boolean fencedSet() {
        return fencer.set(KEY, VALUE);
    }

    @Benchmark
    public void plainHSet() {
        template.opsForHash().put(HASH, FIELD, VALUE);
    }

    @Benchmark
    public boolean fencedHSet() {
        return fencer.hset(HASH, FIELD, VALUE);
    }
}
