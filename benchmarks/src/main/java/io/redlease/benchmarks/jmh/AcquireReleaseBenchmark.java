package io.redlease.benchmarks.jmh;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Semaphore;
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
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One acquire plus one release, two ways.
 *
 * <p>{@code scripts}: the core's own {@code acquire.lua} and {@code release.lua} (read from its
 * jar) run back to back through the template: the wire cost, two EVALSHA round trips. The elector's
 * package-private {@code acquireOnce()} / {@code releaseOnce()} cannot be called from this package
 * (and a benchmark in {@code io.redlease.core} would split the package).
 *
 * <p>{@code startStop}: the public API, {@code start()} until {@code onElected}, then {@code
 * stop()} until stepped down, on an elector that is never contested: the loop's hops between
 * threads, the renewal the loop sends right after winning (as the Go library does), and, with
 * notifications on, subscribing to and unsubscribing from the release channel.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class AcquireReleaseBenchmark {

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> ACQUIRE =
            RedisScript.of(
                    "local FIXED_KEYS, FIXED_ARGS = 3, 2\n" + coreScript("acquire.lua"),
                    List.class);

    private static final RedisScript<Long> RELEASE =
            RedisScript.of(coreScript("release.lua"), Long.class);

    @Param({"true", "false"})
    public boolean releaseNotifications;

    private RedisServer redis;

    private LettuceConnectionFactory factory;

    private StringRedisTemplate template;

    private Elector elector;

    private final Semaphore elected = new Semaphore(0);

    private List<String> acquireKeys;

    private List<String> leaseKey;

    @Setup(Level.Trial)
    public void setUp() {
        redis = BenchRedis.start();
        factory = BenchRedis.lettuce(redis.port());
        template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        String name = "jmh-cycle";
        elector =
                new Elector(
                        template,
                        ElectorConfig.builder(name)
                                .instanceId("jmh-instance")
                                .releaseNotifications(releaseNotifications)
                                .observer(
                                        new Observer() {
                                            @Override
                                            public void onElected(long token) {
                                                elected.release();
                                            }
                                        })
                                .build());
        acquireKeys = List.of("raw:leader", "raw:fence", "raw:fence:applied");
        leaseKey = List.of("raw:leader");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        elector.stop();
        factory.destroy();
        redis.close();
    }

    @Benchmark
    public Long scripts() {
        template.execute(ACQUIRE, acquireKeys, "raw-instance", "5000");
        return template.execute(RELEASE, leaseKey, "raw-instance", "raw:released");
    }

    @Benchmark
    public void startStop() throws InterruptedException {
        elector.start();
        if (!elected.tryAcquire(5, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not elected within 5 s");
        }
        elector.stop();
    }

    static String coreScript(String name) {
        try (InputStream in = Elector.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("no " + name + " next to Elector in the core jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
