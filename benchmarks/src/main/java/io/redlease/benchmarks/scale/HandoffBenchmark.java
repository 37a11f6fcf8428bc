package io.redlease.benchmarks.scale;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Machine;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import io.redlease.test.RedisServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Graceful hand-offs in one warm JVM: two electors of one election, each on a connection factory of
 * its own (as two instances would be), hand leadership back and forth; each hand-off is timed from
 * just before the leader's {@code stop()} to the successor's {@code onElected}. The failover suite
 * measures the same between two JVMs that run the path only a few dozen times; this one shows the
 * engine once the JIT has compiled it.
 *
 * <p>Usage: {@code HandoffBenchmark [--handoffs 600] [--warmup 200] [--out
 * benchmarks/target/handoff]}.
 */
public final class HandoffBenchmark {

    public static void main(String[] args) throws Exception {
        int handoffs = 600;
        int warmup = 200;
        Path out = Path.of("benchmarks/target/handoff");
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--handoffs" -> handoffs = Integer.parseInt(args[i + 1]);
                case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (RedisServer redis = BenchRedis.start()) {
            run(redis, handoffs, warmup, out);
        }
        System.exit(0);
    }

    private static void run(RedisServer redis, int handoffs, int warmup, Path out)
            throws Exception {
        BlockingQueue<Long> elected = new ArrayBlockingQueue<>(16);
        Observer stamp =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        elected.add(System.nanoTime());
                    }
                };
        List<LettuceConnectionFactory> factories = new ArrayList<>();
        Elector[] electors = new Elector[2];
        for (int i = 0; i < 2; i++) {
            LettuceConnectionFactory factory = BenchRedis.lettuce(redis.port());
            factories.add(factory);
            StringRedisTemplate template = new StringRedisTemplate(factory);
            template.afterPropertiesSet();
            electors[i] =
                    new Elector(
                            template,
                            ElectorConfig.builder("handoff")
                                    .instanceId("e" + i)
                                    .observer(stamp)
                                    .build());
        }
        long[] busy = roundTrips(factories.get(0), 2000, 0);
        long[] idle = roundTrips(factories.get(0), 300, 20);
        electors[0].start();
        take(elected);
        electors[1].start();
        await(redis, electors[1]);
        long[] nanos = new long[handoffs];
        int leader = 0;
        for (int n = 0; n < warmup + handoffs; n++) {
            int follower = 1 - leader;
            long stopping = System.nanoTime();
            electors[leader].stop();
            long took = take(elected) - stopping;
            if (n >= warmup) {
                nanos[n - warmup] = took;
            }
            // The old leader contends again and follows: the next hand-off goes the other way.
            electors[leader].start();
            await(redis, electors[leader]);
            leader = follower;
        }
        Arrays.sort(nanos);
        StringBuilder md = new StringBuilder();
        md.append("# Graceful hand-off in one warm JVM\n\n");
        md.append("Commit ").append(Machine.commit()).append("; ");
        md.append(Machine.describe(redis)).append("\n\n");
        md.append("| Measure | Value |\n|---|---|\n");
        md.append("| hand-offs timed (after ").append(warmup).append(" warm-up) | ");
        md.append(handoffs).append(" |\n");
        md.append("| p50 | ").append(micros(nanos, 0.50)).append(" |\n");
        md.append("| p90 | ").append(micros(nanos, 0.90)).append(" |\n");
        md.append("| p99 | ").append(micros(nanos, 0.99)).append(" |\n");
        md.append("| max | ").append(micros(nanos, 1.0)).append(" |\n");
        md.append(
                        "\nOne round trip (PING) on the elector's shared Lettuce connection, from the call")
                .append(" to the waiting thread's wake-up:\n\n");
        md.append("| Round trip | p50 | p90 | p99 |\n|---|---|---|---|\n");
        md.append("| back to back (2,000) | ")
                .append(micros(busy, 0.50))
                .append(" | ")
                .append(micros(busy, 0.90))
                .append(" | ")
                .append(micros(busy, 0.99))
                .append(" |\n");
        md.append("| after 20 ms idle (300) | ")
                .append(micros(idle, 0.50))
                .append(" | ")
                .append(micros(idle, 0.90))
                .append(" | ")
                .append(micros(idle, 0.99))
                .append(" |\n");
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
        for (Elector elector : electors) {
            elector.close();
        }
        factories.forEach(LettuceConnectionFactory::destroy);
    }

    /**
     * Times PINGs on the factory's shared connection through Lettuce's asynchronous API (the path
     * the engine's calls take), each after an idle pause, and returns them sorted.
     */
    private static long[] roundTrips(LettuceConnectionFactory factory, int count, long idleMillis)
            throws Exception {
        RedisConnection connection = factory.getConnection();
        try {
            @SuppressWarnings("unchecked")
            RedisClusterAsyncCommands<byte[], byte[]> commands =
                    (RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
            long[] nanos = new long[count];
            for (int i = 0; i < count; i++) {
                if (idleMillis > 0) {
                    Thread.sleep(idleMillis); // the idle gap is what is measured
                }
                long sent = System.nanoTime();
                commands.ping().get();
                nanos[i] = System.nanoTime() - sent;
            }
            Arrays.sort(nanos);
            return nanos;
        } finally {
            connection.close();
        }
    }

    private static String micros(long[] sorted, double quantile) {
        int index = Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1);
        return String.format("%.0f µs", sorted[Math.max(index, 0)] / 1000.0);
    }

    private static long take(BlockingQueue<Long> elected) throws InterruptedException {
        Long at = elected.poll(30, TimeUnit.SECONDS);
        if (at == null) {
            throw new IllegalStateException("no election within 30 s");
        }
        return at;
    }

    /**
     * Waits until the elector follows and both electors hear releases (two subscribers on the
     * channel), then lets the follower's look at the lease that its subscription triggers settle.
     */
    private static void await(RedisServer redis, Elector elector) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!elector.isRunning() || elector.isLeader() || subscribers(redis) < 2) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no subscribed follower within 30 s");
            }
            Thread.sleep(5); // polling a condition in a benchmark harness
        }
        Thread.sleep(50); // the follower's look after subscribing: a settling pause
    }

    private static long subscribers(RedisServer redis) {
        List<?> reply = (List<?>) redis.command("PUBSUB", "NUMSUB", "handoff:released");
        return reply == null || reply.size() < 2 ? 0 : ((Number) reply.get(1)).longValue();
    }
}
