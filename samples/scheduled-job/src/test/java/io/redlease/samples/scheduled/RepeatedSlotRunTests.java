package io.redlease.samples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.withSettings;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.mockito.invocation.InvocationOnMock;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

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

    /** Every event emitted, as {@code "<event> <details>"}. */
    private static final Queue<String> emitted = new ConcurrentLinkedQueue<>();

    /** What the test does when a report was applied (called with its details). */
    private static final AtomicReference<Consumer<String>> onReportApplied =
            new AtomicReference<>(details -> {});

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> NAME);
    }

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    @Autowired private SlotReport report;

    @Autowired private StringRedisTemplate redis;

    @Test
    void aSlotRunAgainAfterItsTermEndedBetweenTheReportAndTheMarkIsReportedOnce() {
        AtomicReference<String> cutShort = new AtomicReference<>();
        AtomicReference<RedleaseTester.ForeignLease> stolen = new AtomicReference<>();
        onReportApplied.set(
                details -> {
                    if (cutShort.compareAndSet(null, slotOf(details))) {
                        // Written; the lease goes before the run completes and marks.
                        stolen.set(tester.stealLease(Duration.ofMinutes(1)));
                    }
                });

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

    /**
     * Records every event the application emits and hands each applied report to {@link
     * #onReportApplied}. The events bean is wrapped before anything uses it, and nothing is stubbed
     * later: stubbing a spy while the scheduler's and the callbacks' threads call it is not safe
     * (in one CI run such a call took the stubbing, so the lease was never taken away).
     */
    @TestConfiguration(proxyBeanMethods = false)
    static class RecordEvents {

        @Bean
        static BeanPostProcessor recordingEvents() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (!(bean instanceof DemoEvents)) {
                        return bean;
                    }
                    return mock(
                            DemoEvents.class,
                            withSettings()
                                    .spiedInstance(bean)
                                    .stubOnly()
                                    .defaultAnswer(RepeatedSlotRunTests::record));
                }
            };
        }
    }

    private static Object record(InvocationOnMock invocation) throws Throwable {
        if (invocation.getMethod().getName().equals("emit")) {
            String event = invocation.getArgument(0);
            String details = invocation.getArgument(1);
            emitted.add(event + " " + details);
            if (event.equals("report-applied")) {
                onReportApplied.get().accept(details);
            }
        }
        return invocation.callRealMethod();
    }

    private static String slotOf(String details) {
        return details.substring("slot=".length(), details.indexOf(' '));
    }
}
