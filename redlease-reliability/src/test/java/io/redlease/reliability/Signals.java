package io.redlease.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Sends signals to processes by pid with the {@code kill} command, and reads their state. */
final class Signals {

    private Signals() {}

    static void send(long pid, String signal) {
        try {
            Process kill =
                    new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                            .redirectErrorStream(true)
                            .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException(
                        "kill -"
                                + signal
                                + " "
                                + pid
                                + " failed: "
                                + new String(
                                        kill.getInputStream().readAllBytes(),
                                        StandardCharsets.UTF_8));
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** Sends the signal, then waits (bounded) until /proc shows the process stopped or not. */
    static void sendAndAwait(long pid, String signal, boolean stopped) {
        send(pid, signal);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - deadline < 0) {
            Character state = state(pid);
            if (state == null || (state == 'T') == stopped) {
                return;
            }
            Thread.onSpinWait();
        }
        throw new IllegalStateException("process " + pid + " did not reach stopped=" + stopped);
    }

    static Character state(long pid) {
        try {
            String text = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int end = text.lastIndexOf(')');
            return text.charAt(end + 2);
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }
}
