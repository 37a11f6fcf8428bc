package io.redlease.samples.scheduled;

import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.task.ThreadPoolTaskSchedulerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Publishes numbered reports, one instance at a time, and one report per slot of a cron schedule.
 * Run several copies with the same {@code redlease.name}: one leads and publishes, the others wait
 * to take over.
 */
@SpringBootApplication
@EnableScheduling
public class ScheduledJobApplication {

    /**
     * Skews the scheduler's clock by {@code sample.clock-skew} (default 0), to show that instances
     * whose clocks differ still run each slot once.
     */
    @Bean
    ThreadPoolTaskSchedulerCustomizer sampleClockSkew(
            @Value("${sample.clock-skew:0ms}") Duration skew) {
        return scheduler -> scheduler.setClock(Clock.offset(Clock.systemDefaultZone(), skew));
    }

    public static void main(String[] args) {
        SpringApplication.run(ScheduledJobApplication.class, args);
    }
}
