package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Process and file helpers for the fixtures, and the JVM shutdown hook that ends whatever they
 * started and is still alive.
 */
final class Processes {

    private static final Map<Long, Runnable> CLEANUPS = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong();
    private static final AtomicBoolean HOOK_ADDED = new AtomicBoolean();

    private Processes() {}

    /**
     * Registers an action that the shutdown hook runs if it is still registered when the JVM exits.
     */
    static Registration onJvmExit(Runnable cleanup) {
        if (HOOK_ADDED.compareAndSet(false, true)) {
            Thread hook = new Thread(Processes::runAll, "redlease-test-shutdown-hook");
            Runtime.getRuntime().addShutdownHook(hook);
        }
        long id = IDS.incrementAndGet();
        CLEANUPS.put(id, cleanup);
        return () -> CLEANUPS.remove(id);
    }

    private static void runAll() {
        for (Runnable cleanup : CLEANUPS.values()) {
            try {
                cleanup.run();
            } catch (RuntimeException ignored) {
                // best effort while the JVM exits
            }
        }
    }

    /** A registered cleanup action; cancel it once the thing it cleans up is gone. */
    @FunctionalInterface
    interface Registration {
        void cancel();
    }

    /** Sends a signal such as {@code STOP} or {@code CONT} with the {@code kill} command. */
    static void signal(long pid, String signal) {
        ProcessBuilder builder =
                new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                        .redirectErrorStream(true);
        try {
            Process kill = builder.start();
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pid + " did not finish");
            }
            String output =
                    new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (kill.exitValue() != 0) {
                throw new IllegalStateException(
                        "kill -" + signal + " " + pid + " failed: " + output.trim());
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not run kill -" + signal + " " + pid, ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while sending SIG" + signal, ex);
        }
    }

    /**
     * Returns the scheduler state letter of a process from {@code /proc} ({@code T} when stopped),
     * or {@code null} where {@code /proc} is not available.
     */
    static @Nullable Character state(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String text = Files.readString(stat, StandardCharsets.UTF_8);
            int end = text.lastIndexOf(')');
            return end < 0 || end + 2 >= text.length() ? null : text.charAt(end + 2);
        } catch (IOException ex) {
            return null;
        }
    }

    /** Waits, bounded, until the process is or is no longer in the stopped state. */
    static void awaitStopped(long pid, boolean stopped, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Character state = state(pid);
            if (state == null || (state == 'T') == stopped) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "Process "
                                + pid
                                + (stopped ? " did not stop" : " did not continue")
                                + " within "
                                + timeout
                                + " (state "
                                + state
                                + ")");
            }
            pause(Duration.ofMillis(2));
        }
    }

    /** Sleeps briefly inside a bounded polling loop. */
    static void pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting", ex);
        }
    }

    /** Returns whether the process exited within the timeout. */
    static boolean awaitExit(Process process, Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for process exit", ex);
        }
    }

    /** Deletes a directory tree, ignoring files that are already gone. */
    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(
                    dir,
                    new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                                throws IOException {
                            Files.deleteIfExists(file);
                            return FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult visitFileFailed(Path file, IOException ex)
                                throws IOException {
                            if (ex instanceof NoSuchFileException) {
                                return FileVisitResult.CONTINUE;
                            }
                            throw ex;
                        }

                        @Override
                        public FileVisitResult postVisitDirectory(
                                Path directory, @Nullable IOException ex) throws IOException {
                            Files.deleteIfExists(directory);
                            return FileVisitResult.CONTINUE;
                        }
                    });
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not delete " + dir, ex);
        }
    }

    /** Returns the last lines of a text file, or an empty string if it cannot be read. */
    static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "";
            }
            String[] all =
                    new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n", -1);
            int from = Math.max(0, all.length - lines);
            return String.join("\n", Arrays.asList(all).subList(from, all.length)).strip();
        } catch (IOException ex) {
            return "";
        }
    }
}
