package io.redlease.test;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The temporary directory of one managed server and the processes started in it: stopped and
 * deleted by {@link #close()}, by the JVM shutdown hook if the JVM exits first, and by each
 * process's watchdog if the JVM is killed.
 */
final class Workspace implements AutoCloseable, Runnable {

    private static final Duration GRACE = Duration.ofSeconds(5);
    private static final Duration POLL = Duration.ofMillis(10);

    private final Path dir;
    private final List<ManagedProcess> processes = new ArrayList<>();
    private final Processes.Registration registration;
    private boolean closed;

    private Workspace(Path dir) {
        this.dir = dir;
        this.registration = Processes.onJvmExit(this);
    }

    /** Creates a fresh directory {@code <java.io.tmpdir>/<prefix>-<random>}. */
    static Workspace create(String prefix) {
        try {
            return new Workspace(Files.createTempDirectory(prefix + "-"));
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not create a directory for " + prefix, ex);
        }
    }

    /** Returns the directory. */
    Path dir() {
        return dir;
    }

    /**
     * Starts a long-running process in the directory, its output appended to {@code log}.
     *
     * @param env adjusts the environment the process inherits from this JVM
     * @param stop the signal with which {@link #close()} and the watchdog end it
     */
    synchronized ManagedProcess start(
            String name,
            List<String> command,
            Consumer<Map<String, String>> env,
            Path log,
            String stop) {
        ProcessBuilder builder =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        env.accept(builder.environment());
        ManagedProcess process = ManagedProcess.start(name, builder, stop, dir);
        processes.add(process);
        return process;
    }

    /**
     * Runs a command to completion, feeding it {@code input}, and throws with the tail of its log
     * if it fails or outlasts the timeout.
     */
    void run(
            String name,
            List<String> command,
            Consumer<Map<String, String>> env,
            @Nullable String input,
            Duration timeout) {
        Path log = dir.resolve(name + ".log");
        ManagedProcess process = start(name, command, env, log, "KILL");
        try {
            if (input != null) {
                writeInput(process, input);
            }
            if (!process.awaitExit(timeout)) {
                throw new IllegalStateException(
                        name
                                + " did not finish within "
                                + timeout.toSeconds()
                                + " s; output:\n"
                                + Processes.tail(log, 30));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        name
                                + " failed with exit code "
                                + process.exitValue()
                                + " ("
                                + String.join(" ", command)
                                + "); output:\n"
                                + Processes.tail(log, 30));
            }
        } finally {
            stop(process);
        }
    }

    private static void writeInput(ManagedProcess process, String input) {
        try (OutputStream stdin = process.stdin()) {
            stdin.write(input.getBytes(StandardCharsets.UTF_8));
        } catch (IOException ex) {
            // the process exited early; its exit code and log say why
        }
    }

    /**
     * Waits until {@code ready} holds while the process lives, bounded by {@code timeout}.
     *
     * @param portInUse recognises, in the log, a server that exited because its port was taken
     * @throws PortInUseException if the process exited and its log says its port was taken
     * @throws IllegalStateException if it exited for another reason or did not get ready in time
     */
    void awaitReady(
            ManagedProcess process,
            Path log,
            Duration timeout,
            BooleanSupplier ready,
            Predicate<String> portInUse)
            throws PortInUseException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                String tail = Processes.tail(log, 40);
                stop(process);
                if (portInUse.test(tail)) {
                    throw new PortInUseException();
                }
                throw new IllegalStateException(
                        process
                                + " exited with code "
                                + process.exitValue()
                                + " before it was ready; log tail:\n"
                                + tail);
            }
            if (ready.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                stop(process);
                throw new IllegalStateException(
                        process
                                + " was not ready within "
                                + timeout.toSeconds()
                                + " s (-D"
                                + TestTimeScale.PROPERTY
                                + "=2 doubles the wait on a slow machine); log tail:\n"
                                + Processes.tail(log, 40));
            }
            Processes.pause(POLL);
        }
    }

    /** Stops one process of the workspace and forgets it. */
    synchronized void stop(ManagedProcess process) {
        process.stop(GRACE);
        processes.remove(process);
    }

    /**
     * Stops every process, newest first, and deletes the directory; calling it again is a no-op.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (int i = processes.size() - 1; i >= 0; i--) {
                processes.get(i).stop(GRACE);
            }
            processes.clear();
            Processes.deleteRecursively(dir);
        } finally {
            registration.cancel();
        }
    }

    /** Runs {@link #close()} from the shutdown hook, best effort. */
    @Override
    public void run() {
        try {
            close();
        } catch (RuntimeException ignored) {
            // best effort while the JVM exits
        }
    }

    /** Thrown when a server exited because the port it was given was taken in the meantime. */
    static final class PortInUseException extends Exception {

        private static final long serialVersionUID = 1L;

        PortInUseException() {
            super("Address already in use");
        }
    }
}
