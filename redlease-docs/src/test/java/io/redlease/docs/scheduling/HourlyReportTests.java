package io.redlease.docs.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The once-per-slot example of docs/scheduled-jobs.md, on a schedule of one slot per second. */
@ExtendWith(RedisExtension.class)
class HourlyReportTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    @Test
    void eachSlotIsReportedOnceAndMarkedInTheLedger(RedisServer server) {
        String name = "{hourly-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app =
                SpringApplication.run(
                        SchedulingApplication.class,
                        "--spring.main.web-application-type=none",
                        "--spring.data.redis.url=" + server.url(),
                        "--redlease.name=" + name,
                        "--reports.hourly.cron=* * * * * *")) {
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            HourlyReport report = app.getBean(HourlyReport.class);
            await().atMost(FIRST_ELECTION)
                    .until(() -> redis.opsForList().size(report.slotsKey()) >= 3);
            List<String> slots = redis.opsForList().range(report.slotsKey(), 0, -1);
            assertThat(slots).doesNotHaveDuplicates();
            assertThat(slots)
                    .allSatisfy(slot -> assertThat(Instant.parse(slot).getNano()).isZero());
            assertThat(redis.opsForHash().get(report.reportsKey(), slots.get(0)))
                    .isEqualTo("report for " + slots.get(0));
            // The ledger beside the election's keys records the latest completed slot.
            assertThat(redis.hasKey(name + ":slots:hourlyReport.publish")).isTrue();
        }
    }
}
