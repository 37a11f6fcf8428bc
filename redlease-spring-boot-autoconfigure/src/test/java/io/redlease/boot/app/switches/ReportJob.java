package io.redlease.boot.app.switches;

// tag::quick-start-job[]
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Instant;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

@Component
class ReportJob {

    private final LeadershipContext leadership;

    ReportJob(LeadershipContext leadership) {
        this.leadership = leadership;
    }

    @Scheduled(fixedDelay = 60_000)
    @LeaderOnly
    void publish() {
        // Throws NotLeaderException if the term just ended, and ElectionDisabledException (naming
        // the switch) with redlease.enabled=false: no write claims a fence it does not have.
        Fencer fencer = leadership.requireFencer();
        if (!fencer.hset("{report-builder}:state", "last-run", Instant.now().toString())) {
            throw new IllegalStateException("a newer leader exists: this term is over");
        }
    }
}
// end::quick-start-job[]
