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
        this.stateKey = election + ":state"; // the election's own key: the fence guards it
    }

    @Scheduled(fixedDelay = 10_000)
    @LeaderOnly // runs on the leader only; skipped on every other instance
    void publish() {
        Fencer fencer = leadership.requireFencer(); // this term's fencer
        if (!fencer.hset(stateKey, "last-run", Instant.now().toString())) {
            // Refused by Redis: a newer term exists. Fail the run rather than carry on.
            throw new IllegalStateException("term " + fencer.token() + " is over");
        }
    }
}
// end::job[]
