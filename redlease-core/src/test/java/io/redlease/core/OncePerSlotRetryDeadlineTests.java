package io.redlease.core;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * A retry inside a once-per-slot {@code @LeaderOnly} method, after the first attempt outlived the
 * term's deadline, does not start the method again: the run's term is checked again right before
 * each attempt.
 */
@ExtendWith(RedisExtension.class)
class OncePerSlotRetryDeadlineTests {

    private static final Duration TTL = Duration.ofSeconds(30);

    static final AtomicLong CLOCK_OFFSET = new AtomicLong();

    static final AtomicInteger ATTEMPTS = new AtomicInteger();

    static final AtomicInteger BODIES_PAST_DEADLINE = new AtomicInteger();

    static final AtomicReference<String> SEEN = new AtomicReference<>();

    private final Templates templates = new Templates();

    private AnnotationConfigApplicationContext context;

    private Elector elector;

    @AfterEach
    void tearDown() {
        if (elector != null) {
            elector.close();
        }
        if (context != null) {
            context.close();
        }
        templates.close();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableResilientMethods(order = Ordered.HIGHEST_PRECEDENCE)
    static class Config {
        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }

        @Bean
        ThreadPoolTaskScheduler taskScheduler() {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setPoolSize(2);
            return scheduler;
        }

        @Bean
        RetriedSlotJob retriedSlotJob(LeadershipContext leadership) {
            return new RetriedSlotJob(leadership);
        }
    }

    static class RetriedSlotJob {
        private final LeadershipContext leadership;

        RetriedSlotJob(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly(oncePerSlot = true, interruptOnStepDown = false)
        @Retryable(maxRetries = 1, delay = 10)
        public void job() {
            Term term = leadership.term().orElseThrow();
            int attempt = ATTEMPTS.incrementAndGet();
            if (!term.isActive()) {
                BODIES_PAST_DEADLINE.incrementAndGet();
                SEEN.set("attempt " + attempt + " in " + term + " " + term.endReason());
            }
            if (attempt == 1) {
                // The first attempt outlived the term's deadline, and failed.
                CLOCK_OFFSET.set(TTL.plusSeconds(1).toNanos());
                throw new IllegalStateException("a transient failure");
            }
        }
    }

    @Test
    void aRetryInsideAOncePerSlotRunDoesNotStartTheMethodPastTheDeadline(
            RedisServer server, TestInfo info) {
        ATTEMPTS.set(0);
        BODIES_PAST_DEADLINE.set(0);
        CLOCK_OFFSET.set(0);
        elector =
                new Elector(
                        templates.on(server),
                        ElectorConfig.builder(Names.unique(info))
                                .ttl(TTL)
                                .renewInterval(TTL.dividedBy(3))
                                .acquireInterval(Duration.ofMillis(100))
                                .clock(() -> System.nanoTime() + CLOCK_OFFSET.get())
                                .build());
        elector.start();
        await().atMost(scaled(Duration.ofSeconds(10))).until(elector::isLeader);
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Elections.class, () -> Elections.of(elector));
        context.registerBean(
                LeadershipContext.class,
                () -> new LeadershipContext(context.getBean(Elections.class)));
        context.register(Config.class);
        context.refresh();
        await().atMost(scaled(Duration.ofSeconds(20))).until(() -> ATTEMPTS.get() >= 2);
        assertThat(BODIES_PAST_DEADLINE.get())
                .as(
                        "once-per-slot bodies started past the deadline (%s attempts; %s)",
                        ATTEMPTS.get(), SEEN.get())
                .isZero();
    }
}
