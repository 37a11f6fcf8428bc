package io.redlease.reliability;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A {@link CandidateMain} running in a child JVM started with the test classpath; its records are
 * read from its standard output into the parent's history. It is stopped, continued and killed by
 * pid ({@code kill -STOP/-CONT/-KILL}).
 */
final class ChildCandidate implements AutoCloseable {

    final String id;

    private final Process process;

    private final History history;

    private final CountDownLatch ready = new CountDownLatch(1);

    private final List<String> output = java.util.Collections.synchronizedList(new ArrayList<>());

    private volatile boolean leading;

    private ChildCandidate(String id, Process process, History history) {
        this.id = id;
        this.process = process;
        this.history = history;
    }

    static ChildCandidate start(
            String id,
            String host,
            int port,
            String name,
            Duration ttl,
            Duration renew,
            Duration acquire,
            boolean fenced,
            History history) {
        String java =
                ProcessHandle.current()
                        .info()
                        .command()
                        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String classpath =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command =
                List.of(
                        java,
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-Xmx128m",
                        "-cp",
                        classpath,
                        CandidateMain.class.getName(),
                        id,
                        host,
                        Integer.toString(port),
                        name,
                        Long.toString(ttl.toMillis()),
                        Long.toString(renew.toMillis()),
                        Long.toString(acquire.toMillis()),
                        Boolean.toString(fenced));
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException ex) {
            throw new UncheckedIOException("could not start a child JVM", ex);
        }
        ChildCandidate child = new ChildCandidate(id, process, history);
        Thread reader = new Thread(child::read, "child-" + id);
        reader.setDaemon(true);
        reader.start();
        try {
            if (!child.ready.await(30, TimeUnit.SECONDS)) {
                child.close();
                throw new IllegalStateException("child JVM " + id + " not ready: " + child.output);
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            child.close();
            throw new IllegalStateException(ex);
        }
        return child;
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                parse(line);
            }
        } catch (IOException ex) {
            // the child is gone
        }
    }

    private void parse(String line) {
        String[] f = line.split(" ", 7);
        switch (f[0]) {
            case "READY" -> ready.countDown();
            case "E" -> {
                leading = true;
                history.elected(id, Long.parseLong(f[1]), Long.parseLong(f[2]));
            }
            case "S" -> {
                leading = false;
                history.steppedDown(id, f[1], Long.parseLong(f[2]));
            }
            case "W" ->
                    history.write(
                            new History.Write(
                                    id,
                                    Long.parseLong(f[1]),
                                    Long.parseLong(f[2]),
                                    Long.parseLong(f[3]),
                                    Long.parseLong(f[4]),
                                    History.Outcome.valueOf(f[5]),
                                    f.length > 6 ? f[6] : ""));
            case "F" -> {
                String[] g = line.split(" ", 4);
                history.failed(id, g[1], g.length > 3 ? g[3] : "", Long.parseLong(g[2]));
            }
            default -> output.add(line);
        }
    }

    long pid() {
        return process.pid();
    }

    /** Whether the child's last reported transition was an election. */
    boolean isLeader() {
        return leading;
    }

    /** Freezes the whole JVM with SIGSTOP. */
    void pause() {
        Signals.sendAndAwait(pid(), "STOP", true);
    }

    /** Continues it with SIGCONT. */
    void resume() {
        Signals.sendAndAwait(pid(), "CONT", false);
    }

    /** Kills it with SIGKILL, by pid, and waits for it to exit. */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                Signals.send(pid(), "CONT");
                Signals.send(pid(), "KILL");
            } catch (RuntimeException ex) {
                process.destroyForcibly();
            }
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
