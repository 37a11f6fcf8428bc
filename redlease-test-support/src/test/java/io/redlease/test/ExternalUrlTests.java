package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** Runs sample tests in a child JVM whose {@code REDLEASE_TEST_REDIS_URL} names a server. */
@ExtendWith(RedisExtension.class)
class ExternalUrlTests {

    @Test
    void withTheUrlSetPlainTestsPassAndTestsNeedingLeversAreAborted(
            @Dedicated(requirePass = "pw") RedisServer redis)
            throws IOException, InterruptedException {
        RedisServerTests.assumeManaged(redis);
        String key = RedisServerTests.uniqueKey();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder =
                new ProcessBuilder(
                                java.toString(),
                                "-cp",
                                System.getProperty("java.class.path"),
                                RunSamples.class.getName(),
                                key)
                        .redirectErrorStream(true);
        builder.environment()
                .put(RedisServer.URL_ENV, "redis://:pw@127.0.0.1:" + redis.port() + "/2");
        Process child = builder.start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as(output).isTrue();
        List<String> lines = output.strip().lines().toList();
        assertThat(lines.get(lines.size() - 1))
                .as(output)
                .isEqualTo("succeeded=2 aborted=2 failed=0");
        redis.command("SELECT", "2");
        assertThat(redis.command("GET", key)).isEqualTo("written through the URL");
    }

    /** Runs {@link Samples} and prints the outcome counts on the last line. */
    static final class RunSamples {

        public static void main(String[] args) {
            System.setProperty("redlease.sample.key", args[0]);
            LauncherDiscoveryRequest request =
                    LauncherDiscoveryRequestBuilder.request()
                            .selectors(selectClass(Samples.class))
                            .build();
            SummaryGeneratingListener listener = new SummaryGeneratingListener();
            LauncherFactory.create().execute(request, listener);
            TestExecutionSummary summary = listener.getSummary();
            summary.printFailuresTo(new PrintWriter(System.out, true), 20);
            System.out.println(
                    "succeeded="
                            + summary.getTestsSucceededCount()
                            + " aborted="
                            + summary.getTestsAbortedCount()
                            + " failed="
                            + summary.getTestsFailedCount());
            System.exit(0);
        }
    }

    @ExtendWith(RedisExtension.class)
    static class Samples {

        @Test
        void plainTestUsesTheExternalServer(RedisServer redis) {
            assertThat(redis.kind()).isEqualTo(RedisServer.Kind.EXTERNAL);
            redis.command(
                    "SET", System.getProperty("redlease.sample.key"), "written through the URL");
        }

        @Test
        void dedicatedWithoutOptionsAlsoUsesIt(@Dedicated RedisServer redis) {
            assertThat(redis.kind()).isEqualTo(RedisServer.Kind.EXTERNAL);
        }

        @Test
        void leverIsAborted(@Dedicated RedisServer redis) {
            redis.kill();
        }

        @Test
        void dedicatedWithOptionsIsAborted(@Dedicated(appendOnly = true) RedisServer redis) {
            redis.restart();
        }
    }
}
