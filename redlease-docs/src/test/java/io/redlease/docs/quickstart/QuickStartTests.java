package io.redlease.docs.quickstart;

import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.core.Elections;
import io.redlease.core.Term;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The README's Quick start, run as written: its application, its job and its properties (only the
 * election's name is made unique and Redis pointed at the fixture's server).
 */
@ExtendWith(RedisExtension.class)
class QuickStartTests {

    @Test
    void theLeadersJobWritesThroughTheFenceOfItsTerm(RedisServer server) {
        String name = "{report-builder-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app = start(server, name)) {
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            // The job runs every 10 s; its first run may come before the election and be skipped.
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> redis.opsForHash().get(name + ":state", "last-run") != null);
        }
    }

    @Test
    void aRunWhoseWriteIsRefusedFails(RedisServer server) throws Exception {
        String name = "{report-builder-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app = start(server, name)) {
            RedleaseTester tester =
                    RedleaseTester.of(
                            app.getBean(Elections.class),
                            app.getBean(RedisConnectionFactory.class));
            Term term = tester.awaitLeadership();
            ReportJob job = app.getBean(ReportJob.class);
            // A run of this term, during which another instance wins a newer one: its write is
            // refused, and the run fails instead of returning as if it had published.
            assertThatIllegalStateException()
                    .isThrownBy(
                            () ->
                                    term.execute(
                                            () -> {
                                                tester.startNewerTerm();
                                                job.publish();
                                                return null;
                                            },
                                            false))
                    .withMessage("term " + term.token() + " is over");
        }
    }

    private static ConfigurableApplicationContext start(RedisServer server, String name) {
        return SpringApplication.run(
                ReportApplication.class,
                "--spring.main.web-application-type=none",
                "--spring.data.redis.url=" + server.url(),
                "--redlease.name=" + name);
    }
}
