package io.redlease.boot.app;

import io.redlease.core.LeadershipContext;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/** A minimal application: the starter's auto-configuration and one leader-only scheduled job. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
public class TestApplication {

    @Bean
    SequenceJob sequenceJob(
            LeadershipContext leadership,
            @Value("${redlease.name}") String name,
            @Value("${test.dwell-millis:5}") long dwellMillis) {
        return new SequenceJob(leadership, name, dwellMillis);
    }
}
