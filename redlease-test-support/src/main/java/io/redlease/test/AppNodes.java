package io.redlease.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/**
 * Copies of an application, each in its own JVM on the test's class path, and the events they log:
 * lines of the form {@code DEMO|<epoch ms>|<node>|<kind>|k=v k=v}. Tests stop, crash and freeze the
 * copies with signals ({@code TERM}, {@code KILL}, {@code STOP}, {@code CONT}); closing kills what
 * is left and writes the event log to a file and every line each node printed beside it ({@code
 * <log>.<node>.out}), for reading a failure.
 */
public final class AppNodes implements AutoCloseable {

    private final Class<?> mainClass;

    private final Function<String, List<String>> arguments;

    private final Path log;

    private final Map<String, Process> nodes = new LinkedHashMap<>();

    private final Collection<Event> events = new ConcurrentLinkedQueue<>();

    private final Map<String, Collection<String>> output = new LinkedHashMap<>();

    /**
     * Creates the nodes of an application.
     *
     * @param mainClass the application's main class
     * @param arguments the program arguments of a node, by its id
     * @param log where closing writes the event log
     */
    public AppNodes(Class<?> mainClass, Function<String, List<String>> arguments, Path log) {
        this.mainClass = mainClass;
        this.arguments = arguments;
        this.log = log;
    }

    /** One event of a node's log. */
    public record Event(long time, String node, String kind, Map<String, String> details) {

        /** Returns the {@code slot} detail, in epoch milliseconds. */
        public long slot() {
            return Long.parseLong(details.get("slot"));
        }
    }

    /** Starts a node (again, after it stopped). */
    public void start(String id) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        command.addAll(
                List.of(
                        java,
                        "-Xmx256m",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        classpath,
                        mainClass.getName()));
        command.addAll(arguments.apply(id));
        Collection<String> lines;
        synchronized (nodes) {
            lines = output.computeIfAbsent(id, key -> new ConcurrentLinkedQueue<>());
            lines.add("--- started " + System.currentTimeMillis());
        }
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        synchronized (nodes) {
            nodes.put(id, process);
        }
        Thread reader = new Thread(() -> read(process, lines), "node-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Process process, Collection<String> printed) {
        try (BufferedReader lines =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                printed.add(line);
                int at = line.indexOf("DEMO|");
                if (at >= 0) {
                    events.add(parse(line.substring(at)));
                }
            }
        } catch (IOException ex) {
            // The node ended.
        }
    }

    private static Event parse(String line) {
        String[] parts = line.split("\\|", -1);
        Map<String, String> details = new LinkedHashMap<>();
        for (String pair : parts[4].trim().split(" ")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                details.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return new Event(Long.parseLong(parts[1]), parts[2], parts[3], details);
    }

    /**
     * Sends a signal to a node's process: {@code TERM}, {@code KILL}, {@code STOP}, {@code CONT}.
     */
    public void signal(String id, String signal) throws IOException, InterruptedException {
        Process kill =
                new ProcessBuilder("kill", "-" + signal, Long.toString(process(id).pid())).start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " of node " + id + " failed");
        }
    }

    /** Returns whether a node's process is running. */
    public boolean isAlive(String id) {
        return process(id).isAlive();
    }

    /**
     * Waits for a node's process to end, and returns its exit code.
     *
     * @throws IllegalStateException if it still runs after the timeout
     */
    public int awaitExit(String id, Duration timeout) throws InterruptedException {
        Process process = process(id);
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("node " + id + " still runs after " + timeout);
        }
        return process.exitValue();
    }

    private Process process(String id) {
        synchronized (nodes) {
            Process process = nodes.get(id);
            if (process == null) {
                throw new IllegalArgumentException("no node " + id);
            }
            return process;
        }
    }

    /** Returns the events logged so far, in the order they were read. */
    public List<Event> events() {
        return List.copyOf(events);
    }

    /** Waits for the first event that matches, and returns it. */
    public Event await(Predicate<Event> condition, Duration timeout) {
        Awaitility.await().atMost(timeout).until(() -> events.stream().anyMatch(condition));
        return events.stream().filter(condition).findFirst().orElseThrow();
    }

    /** Returns a condition: an event of the kind at or after the time. */
    public static Predicate<Event> after(long time, String kind) {
        return event -> event.time() >= time && event.kind().equals(kind);
    }

    /** Kills every node. */
    public void killAll() {
        synchronized (nodes) {
            nodes.values().forEach(Process::destroyForcibly);
        }
    }

    @Override
    public void close() throws IOException {
        killAll();
        Files.createDirectories(log.toAbsolutePath().getParent());
        Files.write(log, events.stream().map(Event::toString).toList());
        synchronized (nodes) {
            for (Map.Entry<String, Collection<String>> node : output.entrySet()) {
                Files.write(
                        log.resolveSibling(log.getFileName() + "." + node.getKey() + ".out"),
                        node.getValue());
            }
        }
    }
}
