package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A child JVM starts a server and is killed with {@code SIGKILL}, so no shutdown hook runs: the
 * server's watchdog must still end every process the fixture started and delete its directory.
 */
class WatchdogTests {

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb", "rabbitmq"})
    void serversOfAJvmKilledWithSigkillAreEndedAndTheirDirectoriesDeleted(String server)
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child =
                new ProcessBuilder(
                                java.toString(),
                                "-cp",
                                System.getProperty("java.class.path"),
                                StartAndWait.class.getName(),
                                server)
                        .redirectErrorStream(true)
                        .start();
        List<String> output = new ArrayList<>();
        String started = null;
        try (BufferedReader in =
                new BufferedReader(
                        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                output.add(line);
                if (line.startsWith("STARTED ")) {
                    started = line;
                    break;
                }
            }
            assertThat(started).as("child output %s", output).isNotNull();
            String[] fields = started.split(" ");
            Path dir = Path.of(fields[1]);
            List<Long> pids = new ArrayList<>();
            for (int i = 2; i < fields.length; i++) {
                pids.add(Long.parseLong(fields[i]));
            }
            assertThat(pids).as("servers and watchdogs").hasSizeGreaterThanOrEqualTo(2);

            child.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

            await().atMost(Duration.ofSeconds(20))
                    .untilAsserted(
                            () -> {
                                assertThat(pids).allMatch(ServersTestSupport::isGone);
                                assertThat(dir).doesNotExist();
                            });
        } finally {
            child.destroyForcibly();
        }
    }

    /**
     * Starts a server, prints its directory and the pids of every process this JVM started
     * (servers, their children, watchdogs), and blocks until it is killed.
     */
    static final class StartAndWait {

        public static void main(String[] args) throws IOException {
            Path dir =
                    switch (args[0]) {
                        case "postgres" -> PostgresServer.start().dir();
                        case "mariadb" -> MariaDbServer.start().dir();
                        default -> RabbitMqServer.start().dir();
                    };
            StringBuilder line = new StringBuilder("STARTED ").append(dir);
            ProcessHandle.current()
                    .descendants()
                    .forEach(process -> line.append(' ').append(process.pid()));
            System.out.println(line);
            System.out.flush();
            System.in.read();
        }
    }
}
