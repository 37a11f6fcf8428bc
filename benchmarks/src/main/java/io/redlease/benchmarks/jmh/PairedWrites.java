package io.redlease.benchmarks.jmh;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Summary;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Fencer;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Fenced against plain writes measured in alternation: many short rounds, each timing one block of
 * plain writes and one block of fenced writes (in alternating order) on the same template and
 * connection, and the ratio taken per round. Slow changes of the machine's load (other processes on
 * a shared machine) hit both halves of a round alike, so the median ratio stays meaningful where
 * separate JMH runs of a few seconds each drift apart.
 */
final class PairedWrites {

    private static final int WARM_UP_ROUNDS = 50;

    private PairedWrites() {}

    /** One write operation, for thread {@code thread}. */
    interface Write {
        void run(int thread);
    }

    /**
     * Result of one pairing.
     *
     * @param ratio fenced throughput ÷ plain throughput, per round (median and quartiles)
     * @param plainMicros per write, median over rounds
     * @param fencedMicros per write, median over rounds
     */
    record Result(Summary ratio, double p25, double p75, double plainMicros, double fencedMicros) {}

    /** Measures SET and HSET pairs with 1 and 2 threads on a private Redis; see the class doc. */
    static List<String> run(int rounds, int block) throws Exception {
        List<String> rows = new ArrayList<>();
        try (RedisServer redis = BenchRedis.start()) {
            LettuceConnectionFactory factory = BenchRedis.lettuce(redis.port());
            StringRedisTemplate template = new StringRedisTemplate(factory);
            template.afterPropertiesSet();
            Elector elector = new Elector(template, ElectorConfig.builder("paired").build());
            elector.start();
            Fencer fencer = Leadership.await(elector, Duration.ofSeconds(10));
            try {
                for (int threads : new int[] {1, 2}) {
                    Result set =
                            pair(
                                    threads,
                                    rounds,
                                    block,
                                    t -> template.opsForValue().set("paired:v" + t, "value"),
                                    t -> require(fencer.set("paired:v" + t, "value")));
                    rows.add(row("SET", threads, set));
                    Result hset =
                            pair(
                                    threads,
                                    rounds,
                                    block,
                                    t -> template.opsForHash().put("paired:h", "f" + t, "value"),
                                    t -> require(fencer.hset("paired:h", "f" + t, "value")));
                    rows.add(row("HSET", threads, hset));
                }
            } finally {
                elector.stop();
                factory.destroy();
            }
            rows.add(serverTime(redis.info("commandstats")));
        }
        return rows;
    }

    /** Redis's own time per call (INFO commandstats usec_per_call), as a closing note line. */
    private static String serverTime(String info) {
        StringBuilder line = new StringBuilder("Redis's own time per call (INFO commandstats):");
        for (String command : List.of("set", "hset", "evalsha")) {
            String stats = BenchRedis.parseInfo(info).get("cmdstat_" + command);
            if (stats == null) {
                continue;
            }
            for (String part : stats.split(",")) {
                if (part.startsWith("usec_per_call=")) {
                    line.append(' ')
                            .append(command.toUpperCase(java.util.Locale.ROOT))
                            .append(' ')
                            .append(part.substring("usec_per_call=".length()))
                            .append(" µs;");
                }
            }
        }
        return line.append(
                        " EVALSHA includes the commands the script runs; SET and HSET include"
                                + " those run inside scripts.")
                .toString();
    }

    private static String row(String op, int threads, Result r) {
        return String.format(
                "| %s | %d | %.1f µs | %.1f µs | %.2f | %.2f – %.2f |",
                op, threads, r.plainMicros(), r.fencedMicros(), r.ratio().p50(), r.p25(), r.p75());
    }

    private static void require(boolean applied) {
        if (!applied) {
            throw new IllegalStateException("fenced write refused");
        }
    }

    static Result pair(int threads, int rounds, int block, Write plain, Write fenced)
            throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(threads);
        int total = WARM_UP_ROUNDS + rounds;
        long[][] times = new long[total][2];
        List<Thread> workers = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread worker =
                    new Thread(
                            () -> {
                                try {
                                    for (int round = 0; round < total; round++) {
                                        for (int half = 0; half < 2; half++) {
                                            // Alternate which kind goes first.
                                            boolean fencedNow = (round + half) % 2 == 1;
                                            Write write = fencedNow ? fenced : plain;
                                            barrier.await();
                                            long start = System.nanoTime();
                                            for (int i = 0; i < block; i++) {
                                                write.run(thread);
                                            }
                                            barrier.await();
                                            if (thread == 0) {
                                                times[round][fencedNow ? 1 : 0] =
                                                        System.nanoTime() - start;
                                            }
                                        }
                                    }
                                } catch (InterruptedException | BrokenBarrierException ex) {
                                    failure[0] = ex;
                                } catch (RuntimeException ex) {
                                    failure[0] = ex;
                                    barrier.reset();
                                }
                            },
                            "paired-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (failure[0] != null) {
            throw new IllegalStateException("paired measurement failed", failure[0]);
        }
        List<Double> ratios = new ArrayList<>();
        List<Double> plainMicros = new ArrayList<>();
        List<Double> fencedMicros = new ArrayList<>();
        for (int round = WARM_UP_ROUNDS; round < total; round++) {
            ratios.add((double) times[round][0] / times[round][1]);
            plainMicros.add(times[round][0] / 1e3 / block * threads);
            fencedMicros.add(times[round][1] / 1e3 / block * threads);
        }
        Summary ratio = Summary.of(ratios);
        List<Double> sorted = ratios.stream().sorted().toList();
        return new Result(
                ratio,
                sorted.get(sorted.size() / 4),
                sorted.get(sorted.size() * 3 / 4),
                Summary.of(plainMicros).p50(),
                Summary.of(fencedMicros).p50());
    }
}
