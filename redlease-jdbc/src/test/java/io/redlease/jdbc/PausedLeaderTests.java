package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Term;
import io.redlease.test.RedisServer;
import io.redlease.test.RedisServers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A leader in a child JVM is frozen with SIGSTOP in the middle of a fenced transaction, past its
 * lease; a successor in this JVM wins a newer term and commits; the child is continued and tries to
 * commit: its transaction is refused and rolled back.
 */
class PausedLeaderTests {

    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void pausedLeadersOpenTransactionIsRolledBackOnceTheSuccessorCommitted(Database database)
            throws Exception {
        try (Fixture f = new Fixture(database)) {
            RedisServer redis = RedisServers.shared();
            String name = "paused-" + Long.toHexString(System.nanoTime());
            f.fence.addRow(name);
            Process child = startChild(redis, name, database, f);
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            List<String> output = new ArrayList<>();
            Thread reader = new Thread(() -> read(child, lines, output), "paused-leader-output");
            reader.setDaemon(true);
            reader.start();
            try (Leadership successor = new Leadership(redis, name)) {
                String wrote = lines.poll(60, TimeUnit.SECONDS);
                assertThat(wrote).as("child output %s", output).startsWith("WROTE ");
                long childToken = Long.parseLong(wrote.substring("WROTE ".length()));

                signal(child, "STOP");
                await().atMost(Duration.ofSeconds(5)).until(() -> state(child) == 'T');
                // The child cannot renew while frozen; the successor wins once its lease lapses.
                Term term = successor.lead();
                assertThat(term.token()).isGreaterThan(childToken);
                TransactionFencing fencing = new TransactionFencing(f.fence, successor.context);
                DataSourceTransactionManager manager =
                        new DataSourceTransactionManager(f.dataSource);
                manager.addListener(new FencingTransactionListener(fencing));
                Fixture.inTerm(
                        term,
                        () ->
                                new TransactionTemplate(manager)
                                        .execute(
                                                status -> {
                                                    fencing.fence();
                                                    f.jdbc.sql(
                                                                    "INSERT INTO "
                                                                            + f.orders
                                                                            + " (id, token) VALUES (?, ?)")
                                                            .params("successor", term.token())
                                                            .update();
                                                    return null;
                                                }));

                signal(child, "CONT");
                OutputStream stdin = child.getOutputStream();
                stdin.write("commit\n".getBytes(StandardCharsets.UTF_8));
                stdin.flush();
                String outcome = lines.poll(60, TimeUnit.SECONDS);
                assertThat(outcome)
                        .as("child output %s", output)
                        .isEqualTo("REFUSED " + childToken + " " + term.token());
                assertThat(f.orderIds()).containsExactly("successor");
                assertThat(f.fence.token(name)).hasValue(term.token());
            } finally {
                child.destroyForcibly();
                child.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * The scenario with a real freeze: the leader is frozen mid-transaction past its lease;
     * the successor is elected and commits nothing; the leader is continued and tries to commit.
     * The successor's election claimed the fence row, so the old transaction is refused.
     */
    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void pausedLeaderResumedAfterItsSuccessorsElectionIsRefusedBeforeTheSuccessorCommits(
            Database database) throws Exception {
        try (Fixture f = new Fixture(database)) {
            RedisServer redis = RedisServers.shared();
            String name = "paused-" + Long.toHexString(System.nanoTime());
            f.fence.addRow(name);
            Process child = startChild(redis, name, database, f);
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            List<String> output = new ArrayList<>();
            Thread reader = new Thread(() -> read(child, lines, output), "paused-leader-output");
            reader.setDaemon(true);
            reader.start();
            try (FenceClaims claims =
                            new FenceClaims(
                                    List.of(f.fence),
                                    Duration.ofSeconds(1),
                                    new FencedTransactionListener() {});
                    Leadership successor = new Leadership(redis, name, claims::observer)) {
                String wrote = lines.poll(60, TimeUnit.SECONDS);
                assertThat(wrote).as("child output %s", output).startsWith("WROTE ");
                long childToken = Long.parseLong(wrote.substring("WROTE ".length()));

                signal(child, "STOP");
                await().atMost(Duration.ofSeconds(5)).until(() -> state(child) == 'T');
                Term term = successor.lead();
                assertThat(term.token()).isGreaterThan(childToken);
                // the successor's election claimed the row; it commits nothing
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> f.fence.token(name).orElse(0) >= term.token());
                long claimed = f.fence.token(name).orElseThrow();

                signal(child, "CONT");
                OutputStream stdin = child.getOutputStream();
                stdin.write("commit\n".getBytes(StandardCharsets.UTF_8));
                stdin.flush();
                String outcome = lines.poll(60, TimeUnit.SECONDS);
                assertThat(outcome)
                        .as("child output %s", output)
                        .isEqualTo("REFUSED " + childToken + " " + claimed);
                assertThat(f.orderIds()).isEmpty();
                assertThat(f.fence.token(name)).hasValue(claimed);
            } finally {
                child.destroyForcibly();
                child.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static Process startChild(RedisServer redis, String name, Database database, Fixture f)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
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
                        PausedLeaderMain.class.getName(),
                        redis.host(),
                        Integer.toString(redis.port()),
                        name,
                        database.url(),
                        database.user(),
                        f.fence.name(),
                        f.orders);
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static void read(Process child, BlockingQueue<String> lines, List<String> output) {
        try (BufferedReader in =
                new BufferedReader(
                        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                synchronized (output) {
                    output.add(line);
                }
                if (line.startsWith("WROTE ")
                        || line.equals("COMMITTED")
                        || line.startsWith("REFUSED ")
                        || line.startsWith("FAILED ")) {
                    lines.add(line);
                }
            }
        } catch (IOException ex) {
            // the child is gone
        }
    }

    private static void signal(Process child, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(child.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).as("kill -%s", signal).isZero();
    }

    private static char state(Process child) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(child.pid()), "stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }
}
