package io.redlease.samples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample against a real Redis: it leads, publishes in order, and its stale writes are refused.
 */
@SpringBootTest(
        properties = {
            "sample.report.build-time=50ms",
            "sample.report.interval=10ms",
            "redlease.ttl=1s",
            "redlease.instance-id=sample-test"
        })
@TestRedis
@ExtendWith(OutputCaptureExtension.class)
class ScheduledJobApplicationTests {

    private static final String NAME = "{reports-test-" + System.nanoTime() + "}";

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> NAME);
    }

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    @Autowired private ReportPublisher publisher;

    @Autowired private StatusController status;

    @Autowired private StringRedisTemplate redis;

    @Autowired private MeterRegistry meters;

    /** Published entries as {token, instance, number}. */
    private List<String[]> published() {
        return redis.opsForList().range(publisher.publishedKey(), 0, -1).stream()
                .map(entry -> entry.split(":"))
                .toList();
    }

    @Test
    void theSlotReportLogsItsElectionTokenAndSlot(CapturedOutput output) {
        long token = elector.token().orElseThrow();
        // "[<election>,<token>,<slot>] ... building the report of slot <slot>", from the log
        // pattern in application.properties and the MDC of the run.
        Pattern line =
                Pattern.compile(
                        Pattern.quote("[" + NAME + "," + token + ",")
                                + "([^\\]]+)\\] .*building the report of slot (\\S+)");
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> {
                            Matcher matcher = line.matcher(output.getOut());
                            assertThat(matcher.find()).as(output.getOut()).isTrue();
                            assertThat(matcher.group(1)).isEqualTo(matcher.group(2));
                        });
    }

    @Test
    void theLeaderPublishesReportsInOrder() {
        await().until(() -> publisher.lastPublished() >= 5);
        List<String[]> published = published();
        for (int i = 0; i < published.size(); i++) {
            assertThat(published.get(i)[2]).isEqualTo(Long.toString(i + 1));
            assertThat(published.get(i)[1]).isEqualTo("sample-test");
        }
        Map<String, Object> current = status.status();
        assertThat(current)
                .containsEntry("role", "leader")
                .containsEntry("holder", "sample-test")
                .containsEntry("token", elector.token().getAsLong());
    }

    @Test
    void aPublishWithASupersededTokenIsRejected() {
        await().until(() -> publisher.lastPublished() >= 1);
        long token = tester.awaitLeadership().token();
        // A newer term starts elsewhere while this leader is still building its report under
        // the old token.
        long newer = tester.startNewerTerm();
        await().until(
                        () ->
                                meters.get(RedleaseMetrics.FENCE_WRITES)
                                                .tag("result", "rejected")
                                                .functionCounter()
                                                .count()
                                        >= 1);
        // The leader notices at its next renewal, steps down and wins a newer term.
        await().until(() -> elector.token().orElse(0) > newer);
        long before = publisher.lastPublished();
        await().until(() -> publisher.lastPublished() > before);
        List<String[]> published = published();
        long lastToken = 0;
        for (int i = 0; i < published.size(); i++) {
            long entryToken = Long.parseLong(published.get(i)[0]);
            assertThat(entryToken).isGreaterThanOrEqualTo(lastToken).isNotEqualTo(newer);
            assertThat(published.get(i)[2]).isEqualTo(Long.toString(i + 1));
            lastToken = entryToken;
        }
    }
}
