package io.redlease.samples.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Copies of a sample, each in its own JVM, and the events they log. Each event line is printed on
 * the timeline as the describer words it (not at all when it returns null).
 */
final class Instances {

    private static final Duration WAIT = Duration.ofSeconds(90);

    private final Path jar;

    private final String redisUrl;

    private final long start;

    private final Function<Event, String> describer;

    private final List<Event> events = new CopyOnWriteArrayList<>();

    private final Map<String, Node> nodes = new LinkedHashMap<>();

    /**
     * @param jar the sample's jar
     * @param redisUrl the Redis every copy uses
     * @param start the demo's start, from which the timeline counts
     * @param describer words an event for the timeline, or returns null to leave it out
     */
    Instances(Path jar, String redisUrl, long start, Function<Event, String> describer) {
        this.jar = jar;
        this.redisUrl = redisUrl;
        this.start = start;
        this.describer = describer;
    }

    /** Starts a copy with the given instance id and extra program arguments. */
    synchronized void start(String id, List<String> arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-jar");
        command.add(jar.toString());
        command.add("--spring.main.web-application-type=none");
        command.add("--spring.main.banner-mode=off");
        command.add("--spring.data.redis.url=" + redisUrl);
        command.add("--redlease.instance-id=" + id);
        command.add("--logging.level.root=WARN");
        command.add("--logging.level.io.redlease.samples.demo=INFO");
        command.add("--logging.pattern.console=%level %m%n");
        command.addAll(arguments);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Node node = new Node(id, process);
        nodes.put(id, node);
        Thread reader = new Thread(() -> read(node), "demo-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    synchronized Node node(String id) {
        return nodes.get(id);
    }

    /** Returns every event so far, in arrival order. */
    List<Event> events() {
        return events;
    }

    private void read(Node node) {
        try (BufferedReader lines =
                new BufferedReader(
                        new InputStreamReader(
                                node.process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                int at = line.indexOf("DEMO|");
                if (at >= 0) {
                    Event event = Event.parse(line.substring(at));
                    if (event != null) {
                        events.add(event);
                        print(event);
                    }
                } else if (line.startsWith("ERROR")) {
                    System.out.println("          " + node.id + " | " + line);
                }
            }
        } catch (IOException ex) {
            // The process ended.
        }
    }

    private synchronized void print(Event event) {
        String text = describer.apply(event);
        if (text != null) {
            System.out.printf(
                    "  %6.1fs  %-7s %s%n", (event.time() - start) / 1000.0, event.node(), text);
        }
    }

    /** Returns seconds since the demo started, for the timeline. */
    double elapsed(long millis) {
        return (millis - start) / 1000.0;
    }

    /** Waits for the first event at or after {@code since} that meets the condition. */
    Event await(String what, Predicate<Event> condition, long since) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (Event event : events) {
                if (event.time() >= since && condition.test(event)) {
                    return event;
                }
            }
            Thread.sleep(20);
        }
        throw new DemoFailure("timed out waiting until " + what);
    }

    /** Kills every copy still running (resuming frozen ones first). */
    synchronized void killAll() {
        for (Node node : nodes.values()) {
            node.signal("CONT");
            node.process.destroyForcibly();
        }
        nodes.clear();
    }

    /** One copy of the sample. */
    static final class Node {

        final String id;

        final Process process;

        Node(String id, Process process) {
            this.id = id;
            this.process = process;
        }

        /**
         * Asks the instance to shut down gracefully (SIGTERM), as an orchestrator would. Sent with
         * kill rather than Process.destroy(), which would also close our end of its output.
         */
        void stop() {
            signal("TERM");
        }

        void kill() {
            process.destroyForcibly();
        }

        void signal(String signal) {
            if (process.isAlive()) {
                Console.quietly("kill", "-" + signal, Long.toString(process.pid()));
            }
        }
    }
}
