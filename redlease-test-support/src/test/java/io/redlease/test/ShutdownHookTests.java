package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Checks in a child JVM that servers left open when the JVM exits are ended by the hook. */
class ShutdownHookTests {

    @Test
    void serversLeftOpenAreKilledAndTheirDirectoriesDeletedWhenTheJvmExits()
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child =
                new ProcessBuilder(
                                java.toString(),
                                "-cp",
                                System.getProperty("java.class.path"),
                                LeaveServersOpen.class.getName())
                        .redirectErrorStream(true)
                        .start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as(output).isTrue();
        assertThat(child.exitValue()).as(output).isZero();
        List<String> lines = output.strip().lines().toList();
        String last = lines.get(lines.size() - 1);
        assumeTrue(!last.equals("not managed"), "needs a redis-server started by the fixture");
        for (String server : last.split(";")) {
            String[] pidAndDir = server.split(" ", 2);
            long pid = Long.parseLong(pidAndDir[0]);
            await().atMost(Duration.ofSeconds(5)).until(() -> isGone(pid));
            assertThat(Path.of(pidAndDir[1])).doesNotExist();
        }
    }

    private static boolean isGone(long pid) {
        Character state = Processes.state(pid);
        return ProcessHandle.of(pid).map(handle -> !handle.isAlive()).orElse(true)
                || (state != null && state == 'Z');
    }

    /** Starts a running and a paused server, prints their pids and dirs, and exits. */
    static final class LeaveServersOpen {

        public static void main(String[] args) {
            RedisServer running = RedisServer.start();
            RedisServer paused = RedisServer.start();
            if (!running.isManaged()) {
                System.out.println("not managed");
                return;
            }
            paused.pause();
            System.out.println(
                    running.pid() + " " + running.dir() + ";" + paused.pid() + " " + paused.dir());
            System.exit(0);
        }
    }
}
