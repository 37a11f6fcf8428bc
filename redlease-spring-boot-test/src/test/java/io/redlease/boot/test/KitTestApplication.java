package io.redlease.boot.test;

import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** A user's application in miniature: one leader-only scheduled job. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
class KitTestApplication {

    @Bean
    Job job(LeadershipContext leadership) {
        return new Job(leadership);
    }

    /** Works for as long as its term lasts, recording the tokens it ran and was interrupted in. */
    static class Job {

        private final LeadershipContext leadership;

        private final List<Long> ran = new CopyOnWriteArrayList<>();

        private final List<Long> interrupted = new CopyOnWriteArrayList<>();

        Job(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedDelay = 10)
        @LeaderOnly
        public void run() {
            long token = leadership.token().orElseThrow();
            ran.add(token);
            try {
                // The job's work: it lasts until the term ends and interrupts it.
                Thread.sleep(60_000);
            } catch (InterruptedException ex) {
                interrupted.add(token);
            }
        }

        public List<Long> ran() {
            return ran;
        }

        public List<Long> interrupted() {
            return interrupted;
        }
    }
}
