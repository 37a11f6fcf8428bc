package io.redlease.boot.app.switches;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlease.core.annotation.LeaderOnly;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** An application with a frequent leader-only scheduled job that counts its runs. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
class SkippedJobApplication {

    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    SkippedJob skippedJob() {
        return new SkippedJob();
    }

    static class SkippedJob {

        private final AtomicInteger runs = new AtomicInteger();

        /** Returns how often {@link #run()} ran (read through the proxy, not its fields). */
        public int runs() {
            return runs.get();
        }

        @Scheduled(fixedDelay = 50)
        @LeaderOnly
        public void run() {
            runs.incrementAndGet();
        }
    }
}
