package io.redlease.reliability;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A leader candidate in its own JVM, for process faults ({@code SIGSTOP}, {@code SIGKILL}): it runs
 * one elector with the steady workload and streams its history to standard output, one record per
 * line, for {@link ChildCandidate} to read.
 *
 * <p>Arguments: id host port name ttlMillis renewMillis acquireMillis fenced.
 */
public final class CandidateMain {

    private CandidateMain() {}

    public static void main(String[] args) throws Exception {
        String id = args[0];
        String host = args[1];
        int port = Integer.parseInt(args[2]);
        String name = args[3];
        Duration ttl = Duration.ofMillis(Long.parseLong(args[4]));
        Duration renew = Duration.ofMillis(Long.parseLong(args[5]));
        Duration acquire = Duration.ofMillis(Long.parseLong(args[6]));
        boolean fenced = Boolean.parseBoolean(args[7]);
        PrintStream out =
                new PrintStream(
                        new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        History history = new History(record -> emit(out, record));
        try (Connections connections = new Connections()) {
            Workload workload = Workload.steady(Duration.ofMillis(5)).withLastWord();
            Candidate candidate =
                    new Candidate(
                            id,
                            connections.standalone(host, port),
                            null,
                            io.redlease.core.ElectorConfig.builder(name)
                                    .ttl(ttl)
                                    .renewInterval(renew)
                                    .acquireInterval(acquire),
                            history,
                            new FencedLog(name),
                            fenced ? workload : workload.unfenced());
            candidate.start();
            synchronized (out) {
                out.println("READY");
            }
            new CountDownLatch(1).await();
        }
    }

    private static void emit(PrintStream out, Object record) {
        String line;
        if (record instanceof History.Write w) {
            line =
                    "W "
                            + w.token()
                            + " "
                            + w.seq()
                            + " "
                            + w.start()
                            + " "
                            + w.end()
                            + " "
                            + w.outcome()
                            + " "
                            + w.error().replace('\n', ' ');
        } else if (record instanceof History.Election e) {
            line = "E " + e.token() + " " + e.at();
        } else if (record instanceof History.StepDown s) {
            line = "S " + s.reason() + " " + s.at();
        } else if (record instanceof History.Failure f) {
            line = "F " + f.operation() + " " + f.at() + " " + f.error().replace('\n', ' ');
        } else {
            return;
        }
        synchronized (out) {
            out.println(line);
        }
    }
}
