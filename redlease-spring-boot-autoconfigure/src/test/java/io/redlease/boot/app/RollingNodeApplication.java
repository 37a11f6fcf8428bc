package io.redlease.boot.app;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.boot.event.LeadershipRevokedEvent;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.event.EventListener;

/**
 * One instance of a rolling deploy, run in its own JVM by {@link RollingDeployTests}: the starter,
 * a preference from its arguments, and a line {@code DEMO|<epoch ms>|<id>|<kind>|k=v} on standard
 * output for each leadership change and when it becomes ready.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class RollingNodeApplication {

    private final String id;

    RollingNodeApplication(@Value("${redlease.instance-id}") String id) {
        this.id = id;
    }

    public static void main(String[] args) {
        SpringApplication.run(RollingNodeApplication.class, args);
    }

    @EventListener
    void granted(LeadershipGrantedEvent event) {
        log("elected", "token=" + event.getToken());
    }

    @EventListener
    void revoked(LeadershipRevokedEvent event) {
        log("revoked", "reason=" + event.getReason().name().toLowerCase(java.util.Locale.ROOT));
    }

    @EventListener
    void readiness(AvailabilityChangeEvent<ReadinessState> event) {
        if (event.getState() == ReadinessState.ACCEPTING_TRAFFIC) {
            log("ready", "");
        }
    }

    private void log(String kind, String details) {
        System.out.println(
                "DEMO|" + System.currentTimeMillis() + "|" + id + "|" + kind + "|" + details);
    }
}
