package io.redlease.docs.quickstart;

// tag::job[]
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Instant;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

@Component
class ReportJob {

    private final LeadershipContext leadership;

    private final String stateKey;

    ReportJob(LeadershipContext leadership, @Value("${redlease.name}") String election) {
        this.leadership = leadership;
        this.stateKey = election + ":state"; // a key of the election: its fencer writes only those
    }

    @Scheduled(fixedDelay = 10_000)
    @LeaderOnly // runs on the leader only; skipped on every other instance
    void publish() {
        Fencer fencer = leadership.requireFencer(); // this term's fencer
        // Throws FenceRefusedException if a newer term exists: the run fails instead of
        // passing for one that wrote.
        fencer.hsetOrThrow(stateKey, "last-run", Instant.now().toString());
    }
}
// end::job[]
