package io.redlease.samples.scheduled;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Publishes numbered reports, one instance at a time. Run several copies with the same {@code
 * redlease.name}: one leads and publishes, the others wait to take over.
 */
@SpringBootApplication
@EnableScheduling
public class ScheduledJobApplication {

    public static void main(String[] args) {
        SpringApplication.run(ScheduledJobApplication.class, args);
    }
}
