package io.redlease.benchmarks.failover;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The benchmark's own Redis, watched with {@code MONITOR}: when it ran each command, in Redis's
 * clock, converted to {@link System#nanoTime()} (the child JVMs' event clock; all processes are on
 * one host). It splits a graceful hand-off at the two commands that carry it: the old leader's
 * release (the first {@code PUBLISH} naming the election) and the successor's winning acquire (the
 * last script a client sent naming the election before its {@code ELECTED}).
 *
 * <p>{@code MONITOR} makes Redis copy every command to this connection: hand-offs measured with it
 * are a little slower, so the headline figures come from runs without it.
 */
final class RedisTrace implements AutoCloseable {

    /** One command as Redis ran it: when (nanoTime scale), the client, the command line. */
    private record Entry(long nanos, boolean script, String line) {}

    /** Where a hand-off's time went, in milliseconds: stop → release, → acquire, → elected. */
    record Split(double toRelease, double toAcquire, double toElected) {}

    private final Socket socket;

    private final long epochToNano;

    private final List<Entry> entries = new ArrayList<>();

    private RedisTrace(Socket socket) {
        this.socket = socket;
        Instant now = Instant.now();
        long nano = System.nanoTime();
        this.epochToNano = nano - (now.getEpochSecond() * 1_000_000_000L + now.getNano());
    }

    /** Connects to the server and starts recording every command it runs. */
    static RedisTrace start(String host, int port) throws IOException {
        Socket socket = new Socket(host, port);
        RedisTrace trace = new RedisTrace(socket);
        OutputStream out = socket.getOutputStream();
        out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        Thread reader = new Thread(trace::read, "redis-trace");
        reader.setDaemon(true);
        reader.start();
        return trace;
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(
                        new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                Entry entry = parse(line);
                if (entry != null) {
                    synchronized (entries) {
                        entries.add(entry);
                    }
                }
            }
        } catch (IOException ex) {
            // closed
        }
    }

    /** Parses {@code +<seconds>.<micros> [<db> <client>] "<command>" ...}. */
    private @Nullable Entry parse(String line) {
        int space = line.indexOf(' ');
        int dot = line.indexOf('.');
        int close = line.indexOf("] ");
        if (!line.startsWith("+") || dot < 0 || space < dot || close < 0) {
            return null;
        }
        long seconds = Long.parseLong(line.substring(1, dot));
        long micros = Long.parseLong(line.substring(dot + 1, space));
        long nanos = seconds * 1_000_000_000L + micros * 1_000 + epochToNano;
        String client = line.substring(space + 1, close);
        String command = line.substring(close + 2);
        boolean script =
                !client.endsWith(" lua")
                        && (command.startsWith("\"EVAL") || command.startsWith("\"eval"));
        return new Entry(nanos, script, command);
    }

    /**
     * Splits one graceful hand-off of election {@code name}, or returns null when the commands were
     * not seen (a contestant that announces no release, or the trace lagging behind).
     */
    @Nullable Split split(String name, long steppingNanos, long electedNanos) {
        String releaseChannel = "\"" + name + ":released\"";
        String lockChannel = "{" + name + "}";
        String plainKey = "\"" + name + "\"";
        String prefixedKey = "\"" + name + ":";
        Entry release = null;
        Entry acquire = null;
        synchronized (entries) {
            for (Entry entry : entries) {
                if (entry.nanos < steppingNanos || entry.nanos > electedNanos) {
                    continue;
                }
                String line = entry.line;
                if (release == null
                        && (line.startsWith("\"PUBLISH\"") || line.startsWith("\"publish\""))
                        && (line.contains(releaseChannel) || line.contains(lockChannel))) {
                    release = entry;
                } else if (release != null
                        && entry.script
                        && (line.contains(plainKey) || line.contains(prefixedKey))) {
                    acquire = entry;
                }
            }
            entries.removeIf(entry -> entry.nanos < steppingNanos);
        }
        if (release == null || acquire == null) {
            return null;
        }
        return new Split(
                millis(release.nanos - steppingNanos),
                millis(acquire.nanos - release.nanos),
                millis(electedNanos - acquire.nanos));
    }

    private static double millis(long nanos) {
        return nanos / 1_000_000.0;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
