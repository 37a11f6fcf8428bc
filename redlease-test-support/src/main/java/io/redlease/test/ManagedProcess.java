package io.redlease.test;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A server process started by a fixture, with a watchdog that ends it even when this JVM is killed
 * without running its shutdown hooks ({@code kill -9}, {@code Runtime.halt}, a crash).
 *
 * <p>The watchdog is a small {@code sh} process that blocks reading a pipe from this JVM. Nothing
 * is ever written to it; when this JVM dies, however it dies, the kernel closes the pipe, the read
 * ends, and the watchdog sends the server its stop signal, {@code SIGKILL} if it is still alive
 * five seconds later, and deletes the server's directory. {@link #stop} ends the watchdog first, so
 * it never signals a process id that might have been reused. The JVM shutdown hook of {@link
 * Processes} covers an ordinary exit.
 */
final class ManagedProcess {

    /** Reads stdin until EOF, then stops process $2 with signal $1 and deletes directory $3. */
    private static final String WATCHDOG =
            "while read -r _; do :; done; kill -\"$1\" \"$2\" 2>/dev/null; i=0;"
                    + " while kill -0 \"$2\" 2>/dev/null && [ \"$i\" -lt 50 ]; do sleep 0.1;"
                    + " i=$((i+1)); done; kill -KILL \"$2\" 2>/dev/null;"
                    + " if [ -n \"$3\" ]; then rm -rf \"$3\"; fi";

    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);

    private final String name;
    private final Process process;
    private final Process watchdog;
    private final String stopSignal;

    private ManagedProcess(String name, Process process, Process watchdog, String stopSignal) {
        this.name = name;
        this.process = process;
        this.watchdog = watchdog;
        this.stopSignal = stopSignal;
    }

    /**
     * Starts the process and its watchdog.
     *
     * @param name what the process is, for messages ({@code postgres})
     * @param builder the configured process, whose output the caller redirects to a file
     * @param stopSignal the signal that ends the server quickly ({@code QUIT} for PostgreSQL's
     *     immediate shutdown, {@code KILL} for a throwaway server)
     * @param dir the directory the watchdog deletes after stopping the process, or {@code null}
     * @return the running process
     */
    static ManagedProcess start(
            String name, ProcessBuilder builder, String stopSignal, @Nullable Path dir) {
        Process process;
        try {
            process = builder.start();
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not run " + builder.command(), ex);
        }
        Process watchdog;
        try {
            watchdog =
                    new ProcessBuilder(
                                    List.of(
                                            "sh",
                                            "-c",
                                            WATCHDOG,
                                            "redlease-watchdog",
                                            stopSignal,
                                            Long.toString(process.pid()),
                                            dir == null ? "" : dir.toString()))
                            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                            .redirectError(ProcessBuilder.Redirect.DISCARD)
                            .start();
        } catch (IOException ex) {
            process.destroyForcibly();
            Processes.awaitExit(process, KILL_TIMEOUT);
            throw new UncheckedIOException("Could not start the watchdog of " + name, ex);
        }
        return new ManagedProcess(name, process, watchdog, stopSignal);
    }

    /** Returns the process id. */
    long pid() {
        return process.pid();
    }

    /** Returns the process's standard input. */
    OutputStream stdin() {
        return process.getOutputStream();
    }

    /** Returns whether the process is alive. */
    boolean isAlive() {
        return process.isAlive();
    }

    /** Returns the exit code of a process that has exited. */
    int exitValue() {
        return process.exitValue();
    }

    /** Returns whether the process exits within the timeout. */
    boolean awaitExit(Duration timeout) {
        return Processes.awaitExit(process, timeout);
    }

    /**
     * Ends the watchdog, then the process: its stop signal, then {@code SIGKILL} if it has not
     * exited within {@code grace}. Calling it again does nothing.
     *
     * @throws IllegalStateException if the process survives {@code SIGKILL}
     */
    void stop(Duration grace) {
        watchdog.destroyForcibly();
        if (process.isAlive()) {
            if (stopSignal.equals("KILL")) {
                process.destroyForcibly();
            } else {
                try {
                    Processes.signal(process.pid(), stopSignal);
                } catch (RuntimeException ex) {
                    process.destroyForcibly();
                }
            }
            if (!Processes.awaitExit(process, grace)) {
                process.destroyForcibly();
                if (!Processes.awaitExit(process, KILL_TIMEOUT)) {
                    throw new IllegalStateException(
                            name + " " + process.pid() + " did not exit after SIGKILL");
                }
            }
        }
        Processes.awaitExit(watchdog, KILL_TIMEOUT);
    }

    @Override
    public String toString() {
        return name + "[pid " + process.pid() + "]";
    }
}
