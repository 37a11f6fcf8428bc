package io.redlease.boot.observation;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.redlease.boot.logging.LeaderOnlyLogCorrelation;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.MDC;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * An application traced with OpenTelemetry, its spans kept in memory: a scheduled leader-only job
 * that makes one fenced write per run, called through a scheduled caller that notes the logging
 * context around the call.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
class TracedApplication {

    @Bean
    InMemorySpanExporter spanExporter() {
        return InMemorySpanExporter.create();
    }

    @Bean
    TracedJob tracedJob(LeadershipContext leadership, @Value("${redlease.name}") String name) {
        return new TracedJob(leadership, name);
    }

    @Bean
    Caller caller(TracedJob job) {
        return new Caller(job);
    }

    /** The leader-only job: one fenced write per run, and the MDC as the run sees it. */
    static class TracedJob {

        final List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();

        private final LeadershipContext leadership;

        private final String name;

        TracedJob(LeadershipContext leadership, String name) {
            this.leadership = leadership;
            this.name = name;
        }

        public List<Map<String, String>> contexts() {
            return contexts;
        }

        @LeaderOnly
        public void tick() {
            contexts.add(mdc());
            leadership.requireFencer().set(name + ":last", leadership.instanceId());
        }
    }

    /** Calls the job every 100 ms, noting the MDC after each call. */
    static class Caller {

        final List<Map<String, String>> after = new CopyOnWriteArrayList<>();

        private final TracedJob job;

        Caller(TracedJob job) {
            this.job = job;
        }

        @Scheduled(fixedDelay = 100)
        public void call() {
            MDC.put(LeaderOnlyLogCorrelation.ELECTION, "outer");
            try {
                job.tick();
                after.add(mdc());
            } finally {
                MDC.remove(LeaderOnlyLogCorrelation.ELECTION);
            }
        }
    }

    static Map<String, String> mdc() {
        Map<String, String> copy = MDC.getCopyOfContextMap();
        return copy != null ? Map.copyOf(copy) : Map.of();
    }
}
