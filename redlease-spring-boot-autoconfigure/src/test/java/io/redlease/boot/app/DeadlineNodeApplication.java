package io.redlease.boot.app;

import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyRun;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * One instance run in its own JVM by {@link LeaderOnlyDeadlineTests}: a scheduled {@code
 * LeaderOnly} job and a partitioned one, each firing every 20 ms. Every run prints, at its first
 * line, a line {@code DEMO|<epoch ms>|<id>|run|kind=<kind> late=<past its term's deadline>
 * token=<token> partition=<partition> thread=<thread>}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
public class DeadlineNodeApplication {

    public static void main(String[] args) {
        SpringApplication.run(DeadlineNodeApplication.class, args);
    }

    @Bean
    Runs runs(LeadershipContext leadership, @Value("${redlease.instance-id}") String id) {
        return new Runs(leadership, id);
    }

    /** The leader-only jobs. */
    public static class Runs {

        private final LeadershipContext leadership;

        private final String id;

        Runs(LeadershipContext leadership, String id) {
            this.leadership = leadership;
            this.id = id;
        }

        @Scheduled(fixedRate = 20)
        @LeaderOnly
        public void scheduled() {
            record("scheduled");
        }

        @Scheduled(fixedRate = 20)
        @LeaderOnly(partitions = "shards")
        public void partition() {
            record("partition");
        }

        private void record(String kind) {
            Term term = leadership.term().orElseThrow();
            LeaderOnlyRun run = LeaderOnlyRun.current();
            // Whether the run started past its term's local deadline: remaining() is zero then.
            boolean late = term.remaining().isZero();
            System.out.println(
                    "DEMO|"
                            + System.currentTimeMillis()
                            + "|"
                            + id
                            + "|run|kind="
                            + kind
                            + " late="
                            + late
                            + " token="
                            + term.token()
                            + " partition="
                            + (run != null ? run.partition() : null)
                            + " thread="
                            + Thread.currentThread().getName());
        }
    }
}
