package io.redlease.benchmarks.discovery;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Machine;
import io.redlease.benchmarks.support.Summary;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeaderInfo;
import io.redlease.core.LeaderMetadata;
import io.redlease.core.Observer;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * How soon followers read a new leader's advertised URL: three candidates of one election, each on
 * a connection of its own through a {@link TcpProxy}, advertise their URLs; the leader is stopped
 * (a graceful hand-off) or its link goes silent (a crash: its lease lapses), and the two others
 * read {@link Elector#leaderInfo()} every poll interval. Per follower and trial it records the
 * delay from the new leader's {@code onElected} to the follower's first read that names the new
 * holder with its URL (negative when the read came before the winner's callback ran), the delay
 * from the fault, and every read that named the new holder without its URL.
 *
 * <p>Usage: {@code DiscoveryBenchmark [--trials 10] [--poll-ms 5] [--out
 * benchmarks/target/discovery]}; each trial is one hand-off and one crash.
 */
public final class DiscoveryBenchmark {

    private static final Duration TTL = Duration.ofSeconds(2);

    private static final Duration RENEW = Duration.ofMillis(500);

    private static final Duration ACQUIRE = Duration.ofMillis(500);

    private static final String NAME = "discovery";

    private final RedisServer redis;

    private final long pollNanos;

    private final BlockingQueue<Long> elected = new ArrayBlockingQueue<>(16);

    private final List<Candidate> candidates = new ArrayList<>();

    /** Followers that never contend (not started): each reads on a connection of its own. */
    private final List<Elector> readers = new ArrayList<>();

    private final List<LettuceConnectionFactory> readerFactories = new ArrayList<>();

    private final List<Double> handOffDelays = new ArrayList<>();

    private final List<Double> crashDelays = new ArrayList<>();

    private final List<Double> handOffFromFault = new ArrayList<>();

    private final List<Double> crashFromFault = new ArrayList<>();

    private final AtomicLong withoutUrl = new AtomicLong();

    private int generation;

    private DiscoveryBenchmark(RedisServer redis, long pollMillis) {
        this.redis = redis;
        this.pollNanos = TimeUnit.MILLISECONDS.toNanos(pollMillis);
    }

    public static void main(String[] args) throws Exception {
        int trials = 10;
        long pollMillis = 5;
        Path out = Path.of("benchmarks/target/discovery");
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--trials" -> trials = Integer.parseInt(args[i + 1]);
                case "--poll-ms" -> pollMillis = Long.parseLong(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (RedisServer redis = BenchRedis.start()) {
            new DiscoveryBenchmark(redis, pollMillis).run(trials, pollMillis, out);
        }
        System.exit(0);
    }

    /** One instance: its link to Redis, its connection and its elector. */
    private record Candidate(
            String id, TcpProxy link, LettuceConnectionFactory factory, Elector elector) {

        String url() {
            return "http://" + id + ".example:8080";
        }

        void close() {
            elector.close();
            factory.destroy();
            link.close();
        }
    }

    private Candidate candidate() {
        String id = "i" + generation++;
        TcpProxy link = TcpProxy.start(redis);
        LettuceConnectionFactory factory = BenchRedis.lettuce(link.port());
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        Observer stamp =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        elected.add(System.nanoTime());
                    }
                };
        Elector elector =
                new Elector(
                        template,
                        ElectorConfig.builder(NAME)
                                .ttl(TTL)
                                .renewInterval(RENEW)
                                .acquireInterval(ACQUIRE)
                                .instanceId(id)
                                .observer(stamp)
                                .build());
        Candidate candidate = new Candidate(id, link, factory, elector);
        elector.advertise(LeaderMetadata.url(candidate.url()));
        elector.start();
        return candidate;
    }

    private void run(int trials, long pollMillis, Path out) throws Exception {
        Map<String, String> machine = Machine.describe(redis);
        for (int i = 0; i < 3; i++) {
            candidates.add(candidate());
        }
        for (int i = 0; i < 2; i++) {
            LettuceConnectionFactory factory = BenchRedis.lettuce(redis.port());
            StringRedisTemplate template = new StringRedisTemplate(factory);
            template.afterPropertiesSet();
            readerFactories.add(factory);
            readers.add(
                    new Elector(
                            template,
                            ElectorConfig.builder(NAME).instanceId("reader" + i).build()));
        }
        take();
        for (int trial = 0; trial < trials; trial++) {
            handOffDelays.addAll(trial(false));
            crashDelays.addAll(trial(true));
        }
        candidates.forEach(Candidate::close);
        readers.forEach(Elector::close);
        readerFactories.forEach(LettuceConnectionFactory::destroy);
        write(out, machine, trials, pollMillis);
    }

    /**
     * Ends the current term (gracefully or by silencing the leader's link), lets the followers poll
     * until each read the new leader's URL, replaces the old leader with a fresh instance, and
     * returns the followers' delays from the new leader's {@code onElected}, in milliseconds.
     */
    private List<Double> trial(boolean crash) throws Exception {
        Candidate leader =
                candidates.stream().filter(c -> c.elector().isLeader()).findFirst().orElseThrow();
        elected.clear();
        long fault = System.nanoTime();
        CompletableFuture<Void> stopping = CompletableFuture.completedFuture(null);
        if (crash) {
            leader.link().blackhole();
        } else {
            // stop() returns once the old term is over, released and called back: the followers
            // read meanwhile, from the start.
            stopping = CompletableFuture.runAsync(leader.elector()::stop);
        }
        long[] seen = new long[readers.size()];
        String winner = null;
        while (winner == null || seen[0] == 0 || seen[1] == 0) {
            long at = System.nanoTime();
            for (int i = 0; i < readers.size(); i++) {
                if (seen[i] != 0) {
                    continue;
                }
                Optional<LeaderInfo> read = readers.get(i).leaderInfo();
                long readAt = System.nanoTime();
                if (read.isEmpty() || read.get().instanceId().equals(leader.id())) {
                    continue;
                }
                LeaderInfo info = read.get();
                winner = info.instanceId();
                Candidate holder = byId(winner);
                if (info.url().filter(holder.url()::equals).isPresent()) {
                    seen[i] = readAt;
                } else {
                    withoutUrl.incrementAndGet();
                }
            }
            if (at - fault > TimeUnit.SECONDS.toNanos(30)) {
                throw new IllegalStateException("no follower read a new leader within 30 s");
            }
            long rest = pollNanos - (System.nanoTime() - at);
            if (rest > 0) {
                TimeUnit.NANOSECONDS.sleep(rest); // the followers' poll interval
            }
        }
        long electedAt = take();
        stopping.get(30, TimeUnit.SECONDS);
        List<Double> delays = new ArrayList<>();
        for (long at : seen) {
            delays.add((at - electedAt) / 1e6);
            (crash ? crashFromFault : handOffFromFault).add((at - fault) / 1e6);
        }
        candidates.remove(leader);
        leader.link().pass(); // the lease is another's now: closing has nothing to release
        leader.close();
        candidates.add(candidate());
        return delays;
    }

    private Candidate byId(String id) {
        return candidates.stream().filter(c -> c.id().equals(id)).findFirst().orElseThrow();
    }

    private long take() throws InterruptedException {
        Long at = elected.poll(30, TimeUnit.SECONDS);
        if (at == null) {
            throw new IllegalStateException("no election within 30 s");
        }
        return at;
    }

    private void write(Path out, Map<String, String> machine, int trials, long pollMillis)
            throws Exception {
        StringBuilder md =
                new StringBuilder("# Leader discovery: followers reading a new leader's URL\n\n");
        md.append("| Machine | |\n|---|---|\n");
        machine.forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        md.append("| Load average at end (1/5/15 min) | ")
                .append(Machine.loadAverage())
                .append(" |\n\n");
        md.append("TTL ")
                .append(TTL.toMillis())
                .append(" ms, renew interval ")
                .append(RENEW.toMillis())
                .append(" ms, acquire interval ")
                .append(ACQUIRE.toMillis())
                .append(" ms; ")
                .append(trials)
                .append(" hand-offs and ")
                .append(trials)
                .append(
                        " crashes, two followers (not contending, a connection each) reading `leaderInfo()` every ")
                .append(pollMillis)
                .append(" ms.\n\n");
        md.append(
                "| Delay to a follower's first read of the new leader's URL | n | min | p50 | p95 | max |\n");
        md.append("|---|---|---|---|---|---|\n");
        row(md, "from the new leader's onElected, after a hand-off", handOffDelays);
        row(md, "from the new leader's onElected, after a crash", crashDelays);
        row(md, "from the leader's stop(), a hand-off (failover included)", handOffFromFault);
        row(md, "from the leader's link going silent, a crash (failover included)", crashFromFault);
        md.append("\nReads that named the new holder without its URL: ")
                .append(withoutUrl.get())
                .append(".\n");
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
    }

    private static String signed(double ms) {
        return ms < 0 ? "-" + Summary.millis(-ms) : Summary.millis(ms);
    }

    private static void row(StringBuilder md, String what, List<Double> values) {
        Summary s = Summary.of(values);
        md.append("| ")
                .append(what)
                .append(" | ")
                .append(s.count())
                .append(" | ")
                .append(signed(s.min()))
                .append(" | ")
                .append(signed(s.p50()))
                .append(" | ")
                .append(signed(s.p95()))
                .append(" | ")
                .append(signed(s.max()))
                .append(" |\n");
    }
}
