package io.redlease.samples.demo;

import java.io.IOException;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.TimeUnit;

/** The demo's output, and running small commands. */
final class Console {

    private Console() {}

    static void say(String format, Object... args) {
        System.out.println("==> " + String.format(format, args));
    }

    static void chapter(String title) {
        System.out.println();
        System.out.println("── " + title + " ──");
    }

    static String clock(long millis) {
        return DateTimeFormatter.ofPattern("HH:mm:ss")
                .format(LocalTime.ofInstant(Instant.ofEpochMilli(millis), ZoneId.systemDefault()));
    }

    /** Runs a command, waiting up to 10 s, and ignores how it went. */
    static void quietly(String... command) {
        try {
            new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .start()
                    .waitFor(10, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException ex) {
            // Best effort.
        }
    }
}
