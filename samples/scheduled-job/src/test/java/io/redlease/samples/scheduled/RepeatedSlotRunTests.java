package io.redlease.samples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.doAnswer;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;

/**
 * A slot whose report was written but whose term ended before the slot was marked is run again by
 * the next term (once-per-slot runs complete at least once): the report still appears once.
 */
@SpringBootTest(
        properties = {
            "redlease.ttl=1s",
            "redlease.instance-id=repeat-test",
            "redlease.scheduling.missed-slots=RUN_ALL",
            "sample.slot-report.cron=* * * * * *",
            "sample.slot-report.build-time=50ms"
        })
@TestRedis
class RepeatedSlotRunTests {

    private static final String NAME = "{scheduled-repeat-" + System.nanoTime() + "}";

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> NAME);
    }

    @MockitoSpyBean private DemoEvents events;

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    @Autowired private SlotReport report;

    @Autowired private StringRedisTemplate redis;

    @Test
    void aSlotRunAgainAfterItsTermEndedBetweenTheReportAndTheMarkIsReportedOnce() {
        Queue<String> emitted = new ConcurrentLinkedQueue<>();
        AtomicReference<String> cutShort = new AtomicReference<>();
        AtomicReference<RedleaseTester.ForeignLease> stolen = new AtomicReference<>();
        doAnswer(
                        invocation -> {
                            String event = invocation.getArgument(0);
                            String details = invocation.getArgument(1);
                            emitted.add(event + " " + details);
                            if (event.equals("report-applied")
                                    && cutShort.compareAndSet(null, slotOf(details))) {
                                // Written; the lease goes before the run completes and marks.
                                stolen.set(tester.stealLease(Duration.ofMinutes(1)));
                            }
                            return invocation.callRealMethod();
                        })
                .when(events)
                .emit(anyString(), anyString());

        long first = tester.awaitLeadership().token();
        await().atMost(Duration.ofSeconds(15)).until(() -> stolen.get() != null);
        tester.awaitFollower();
        stolen.get().release();
        long second = tester.awaitLeadership().token();
        assertThat(second).isGreaterThan(first);
        String slot = cutShort.get();
        // The next term runs the slot again (its mark was refused), through the fence.
        await().atMost(Duration.ofSeconds(15))
                .until(() -> emitted.contains("report-applied slot=" + slot + " token=" + second));
        assertThat(emitted).contains("report-applied slot=" + slot + " token=" + first);

        List<String> reports = redis.opsForList().range(report.reportsKey(), 0, -1);
        assertThat(reports)
                .as("reports %s", reports)
                .filteredOn(entry -> entry.startsWith(slot + ":"))
                .singleElement()
                .isEqualTo(slot + ":repeat-test:" + first);
        assertThat(reports.stream().map(entry -> entry.split(":")[0])).doesNotHaveDuplicates();
    }

    private static String slotOf(String details) {
        return details.substring("slot=".length(), details.indexOf(' '));
    }
}
