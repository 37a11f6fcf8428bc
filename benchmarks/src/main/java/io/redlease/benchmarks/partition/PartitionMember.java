package io.redlease.benchmarks.partition;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.benchmarks.support.Event;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The child JVM of {@link PartitionJvmBenchmark}: one instance of one partitioned election, with
 * the library's defaults apart from the time to live.
 *
 * <p>Usage: {@code PartitionMember <redis-port> <name> <instance-id> <partitions> <ttl-ms>}. It
 * connects, prints {@code READY}, then reads commands, one per line: {@code start} (prints {@code
 * STARTING}, stamped just before {@link PartitionedElection#start()}), {@code leave} (prints {@code
 * LEAVING} just before {@link PartitionedElection#close()}, {@code LEFT} once it returned), and
 * {@code exit} or end of input.
 */
public final class PartitionMember {

    private PartitionMember() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String name = args[1];
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder(name, Integer.parseInt(args[3]))
                        .instanceId(args[2])
                        .ttl(Duration.ofMillis(Long.parseLong(args[4])))
                        .build();
        LettuceConnectionFactory factory = BenchRedis.lettuce(port);
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        PartitionedElection election = new PartitionedElection(template, config);
        System.err.println("partition member " + ProcessHandle.current().pid() + ": " + config);
        emit("READY", name);
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("exit")) {
            switch (line) {
                case "start" -> {
                    emit("STARTING", name);
                    election.start();
                }
                case "leave" -> {
                    emit("LEAVING", name);
                    election.close();
                    emit("LEFT", name);
                }
                default -> System.err.println("unknown command: " + line);
            }
        }
        election.close();
        factory.destroy();
        System.exit(0);
    }

    private static void emit(String kind, String name) {
        System.out.println(Event.format(kind, name, System.nanoTime(), ""));
        System.out.flush();
    }
}
