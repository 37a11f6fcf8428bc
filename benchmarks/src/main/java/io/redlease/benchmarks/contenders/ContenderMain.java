package io.redlease.benchmarks.contenders;

import io.redlease.benchmarks.support.Event;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of the failover and cost benchmarks: one process of one contestant, driven by
 * commands on standard input and reporting events on standard output.
 *
 * <p>Usage: {@code ContenderMain <contestant-id> <redis-port>}. Commands, one per line:
 *
 * <ul>
 *   <li>{@code join NAME}: contend for election NAME;
 *   <li>{@code join-many PREFIX N}: contend for PREFIX-0 … PREFIX-(N-1), reporting {@code
 *       ALL_ELECTED} / {@code ALL_FOLLOWING} once all N are leaders / followers;
 *   <li>{@code stop NAME}: step down gracefully ({@code STEPPING_DOWN} is stamped just before the
 *       library is asked to, {@code STOPPED} once it returned);
 *   <li>{@code stats LABEL}: report threads and heap after a full GC;
 *   <li>{@code exit}, or end of input: stop everything and exit.
 * </ul>
 *
 * <p>Events are lines {@code @@ KIND NAME NANOTIME [detail]} (see {@link Event}); times are taken
 * with {@link System#nanoTime()} at the event, on the library's thread.
 */
public final class ContenderMain {

    private static final PrintStream OUT = System.out;

    private final Backend backend;

    private final Map<String, Candidacy> candidacies = new ConcurrentHashMap<>();

    private final ExecutorService stopper = Executors.newCachedThreadPool();

    private final AtomicInteger elected = new AtomicInteger();

    private final AtomicInteger following = new AtomicInteger();

    private volatile int expected = -1;

    private volatile String group = "-";

    private ContenderMain(Backend backend) {
        this.backend = backend;
    }

    public static void main(String[] args) throws Exception {
        Contestant contestant = Contestant.of(args[0]);
        int port = Integer.parseInt(args[1]);
        Backend backend = Backend.create(contestant, port);
        System.err.println(
                "contender " + ProcessHandle.current().pid() + ": " + backend.describe());
        new ContenderMain(backend).serve();
    }

    static void emit(String kind, String name, long nanos, String detail) {
        String line = Event.format(kind, name, nanos, detail);
        synchronized (OUT) {
            OUT.println(line);
            OUT.flush();
        }
    }

    private final Candidacy.Listener listener =
            new Candidacy.Listener() {
                @Override
                public void elected(String name) {
                    long now = System.nanoTime();
                    emit("ELECTED", name, now, "");
                    if (elected.incrementAndGet() == expected) {
                        emit("ALL_ELECTED", group, System.nanoTime(), "");
                    }
                }

                @Override
                public void following(String name) {
                    long now = System.nanoTime();
                    emit("FOLLOWING", name, now, "");
                    if (following.incrementAndGet() == expected) {
                        emit("ALL_FOLLOWING", group, System.nanoTime(), "");
                    }
                }

                @Override
                public void error(String name, Throwable error) {
                    System.err.println("error in " + name + ": " + error);
                    emit(
                            "ERROR",
                            name,
                            System.nanoTime(),
                            String.valueOf(error).replace('\n', ' '));
                }
            };

    private void serve() throws Exception {
        emit("READY", "-", System.nanoTime(), backend.describe().replace(' ', '_'));
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.strip().split(" ");
            switch (words[0]) {
                case "join" -> candidacies.put(words[1], backend.join(words[1], listener));
                case "join-many" -> joinMany(words[1], Integer.parseInt(words[2]));
                case "stop" -> stopAsync(words[1]);
                case "stats" -> emit("STATS", words[1], System.nanoTime(), stats());
                case "exit" -> {
                    shutdown();
                    return;
                }
                default -> System.err.println("unknown command: " + line);
            }
        }
        shutdown();
    }

    private void joinMany(String prefix, int count) {
        group = prefix;
        elected.set(0);
        following.set(0);
        expected = count;
        for (int i = 0; i < count; i++) {
            String name = prefix + "-" + i;
            candidacies.put(name, backend.join(name, listener));
        }
    }

    private void stopAsync(String name) {
        Candidacy candidacy = candidacies.remove(name);
        if (candidacy == null) {
            emit("STOPPED", name, System.nanoTime(), "unknown");
            return;
        }
        stopper.execute(
                () -> {
                    emit("STEPPING_DOWN", name, System.nanoTime(), "");
                    try {
                        candidacy.stop();
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    emit("STOPPED", name, System.nanoTime(), "");
                });
    }

    /** Threads and heap after a full collection, as {@code key=value} pairs. */
    static String stats() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            try {
                Thread.sleep(200);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long redleaseThreads =
                Thread.getAllStackTraces().keySet().stream()
                        .filter(thread -> thread.getName().startsWith("redlease-"))
                        .count();
        long redleaseLoops =
                Thread.getAllStackTraces().keySet().stream()
                        .filter(thread -> thread.getName().startsWith("redlease-loop-"))
                        .count();
        long heapUsed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        return "threads="
                + threads.getThreadCount()
                + " peakThreads="
                + threads.getPeakThreadCount()
                + " redleaseThreads="
                + redleaseThreads
                + " redleaseLoopThreads="
                + redleaseLoops
                + " heapUsedBytes="
                + heapUsed;
    }

    private void shutdown() {
        List<Future<?>> stops = new ArrayList<>();
        for (String name : List.copyOf(candidacies.keySet())) {
            Candidacy candidacy = candidacies.remove(name);
            if (candidacy != null) {
                stops.add(
                        stopper.submit(
                                () -> {
                                    candidacy.stop();
                                    return null;
                                }));
            }
        }
        for (Future<?> stop : stops) {
            try {
                stop.get();
            } catch (Exception ex) {
                // best effort
            }
        }
        stopper.shutdown();
        backend.close();
        System.exit(0);
    }
}
