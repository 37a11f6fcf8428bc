package io.redlease.benchmarks.support;

import io.redlease.test.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Facts about the machine, the versions and the measured commit, for the results' header. */
public final class Machine {

    private Machine() {}

    /** Returns the facts as ordered label/value pairs. */
    public static Map<String, String> describe(RedisServer redis) {
        Map<String, String> facts = new LinkedHashMap<>();
        facts.put("CPU", cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores");
        facts.put("Memory", memTotal());
        facts.put("OS", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        facts.put(
                "JDK",
                System.getProperty("java.vm.name")
                        + " "
                        + System.getProperty("java.runtime.version"));
        facts.put("Redis", "redis-server " + redisVersion(redis) + " (own process, loopback)");
        facts.put("redlease commit", commit());
        facts.put("Load average at start (1/5/15 min)", loadAverage());
        facts.put(
                "Spring Data Redis",
                version(org.springframework.data.redis.core.RedisTemplate.class));
        facts.put("Lettuce", version(io.lettuce.core.RedisClient.class));
        facts.put(
                "Spring Integration",
                version(org.springframework.integration.redis.util.RedisLockRegistry.class));
        facts.put("Redisson", version(org.redisson.Redisson.class));
        return facts;
    }

    /**
     * Returns the measured redlease commit: the system property {@code redlease.commit} if set (for
     * a build from an exported tree), else {@code git rev-parse --short HEAD}, marked when {@code
     * redlease-core} has uncommitted changes.
     */
    public static String commit() {
        String given = System.getProperty("redlease.commit");
        if (given != null && !given.isBlank()) {
            return given;
        }
        return git("rev-parse", "--short", "HEAD") + coreDirty();
    }

    /** Returns the 1, 5 and 15 minute load averages from {@code /proc/loadavg}. */
    public static String loadAverage() {
        try {
            String[] parts =
                    Files.readString(Path.of("/proc/loadavg"), StandardCharsets.UTF_8).split(" ");
            return parts[0] + " / " + parts[1] + " / " + parts[2];
        } catch (IOException | RuntimeException ex) {
            return "unknown";
        }
    }

    private static String coreDirty() {
        String status = git("status", "--porcelain", "--", "redlease-core");
        return status.isBlank() ? "" : " (+ uncommitted changes in redlease-core)";
    }

    private static String cpuModel() {
        try {
            for (String line :
                    Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException ex) {
            // not Linux
        }
        return "unknown CPU";
    }

    private static String memTotal() {
        try {
            for (String line :
                    Files.readAllLines(Path.of("/proc/meminfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("MemTotal:")) {
                    long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    return String.format("%.1f GiB", kb / 1024.0 / 1024.0);
                }
            }
        } catch (IOException | NumberFormatException ex) {
            // not Linux
        }
        return "unknown";
    }

    private static String redisVersion(RedisServer redis) {
        String version = BenchRedis.parseInfo(redis.info("server")).get("redis_version");
        return version == null ? "unknown" : version;
    }

    private static String version(Class<?> type) {
        String version = type.getPackage().getImplementationVersion();
        if (version != null) {
            return version;
        }
        String location = type.getProtectionDomain().getCodeSource().getLocation().getPath();
        String jar = location.substring(location.lastIndexOf('/') + 1);
        return jar.replaceAll("^[a-z-]+-(.*)\\.jar$", "$1");
    }

    /** Runs git in the working directory and returns its trimmed output, or "unknown". */
    public static String git(String... args) {
        List<String> command = new ArrayList<>();
        command.add("git");
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out =
                    new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                return "unknown";
            }
            return out.strip();
        } catch (IOException ex) {
            return "unknown";
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
