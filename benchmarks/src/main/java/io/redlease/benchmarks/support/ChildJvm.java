package io.redlease.benchmarks.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM started by a benchmark: same JDK and class path as the parent, commands sent as lines
 * on its standard input, events read from its standard output into an {@link EventBoard}, standard
 * error appended to a log file.
 *
 * <p>Every child is ended by its pid: {@link #kill()} sends {@code SIGKILL}, {@link #close()} asks
 * it to exit and kills it if it does not; a JVM shutdown hook kills the ones still alive. A child
 * exits by itself when its standard input closes, so none outlives the parent for long.
 */
public final class ChildJvm implements AutoCloseable {

    private static final Set<ChildJvm> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(() -> LIVE.forEach(child -> child.kill()), "child-jvm-reaper"));
    }

    private final String label;

    private final Process process;

    private final long pid;

    private final Writer stdin;

    private ChildJvm(String label, Process process) {
        this.label = label;
        this.process = process;
        this.pid = process.pid();
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts a child JVM running {@code main} with the parent's class path.
     *
     * @param label a short name for logs, e.g. {@code crash-redlease-7}
     * @param jvmArgs options for the child JVM
     * @param main the main class
     * @param args the program arguments
     * @param board where the child's events go
     * @param logDir where its standard error is appended ({@code <label>.log})
     */
    public static ChildJvm start(
            String label,
            List<String> jvmArgs,
            Class<?> main,
            List<String> args,
            EventBoard board,
            Path logDir) {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(args);
        Process process;
        try {
            Files.createDirectories(logDir);
            process =
                    new ProcessBuilder(command)
                            .redirectError(
                                    ProcessBuilder.Redirect.appendTo(
                                            logDir.resolve(label + ".log").toFile()))
                            .start();
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not start " + label, ex);
        }
        ChildJvm child = new ChildJvm(label, process);
        LIVE.add(child);
        Thread reader =
                new Thread(
                        () -> {
                            try (BufferedReader out =
                                    new BufferedReader(
                                            new InputStreamReader(
                                                    process.getInputStream(),
                                                    StandardCharsets.UTF_8))) {
                                String line;
                                while ((line = out.readLine()) != null) {
                                    Event event = Event.parse(child.pid, line);
                                    if (event != null) {
                                        board.post(event);
                                    }
                                }
                            } catch (IOException ex) {
                                // the child is gone
                            }
                        },
                        "child-out-" + label);
        reader.setDaemon(true);
        reader.start();
        return child;
    }

    /** Returns the child's process id. */
    public long pid() {
        return pid;
    }

    /** Returns whether the child is alive. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Sends one command line to the child. */
    public synchronized void send(String line) {
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not write to " + this, ex);
        }
    }

    /** Sends {@code SIGKILL} to the child's pid and waits until it has exited. */
    public void kill() {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        awaitExit(10);
        LIVE.remove(this);
    }

    /** Asks the child to exit; kills it by pid if it has not exited within 15 seconds. */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                send("exit");
            } catch (UncheckedIOException ex) {
                // already closing
            }
            if (!awaitExit(15)) {
                kill();
            }
        }
        LIVE.remove(this);
    }

    private boolean awaitExit(long seconds) {
        try {
            return process.waitFor(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String javaBinary() {
        return ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    @Override
    public String toString() {
        return label + "(pid " + pid + ")";
    }
}
