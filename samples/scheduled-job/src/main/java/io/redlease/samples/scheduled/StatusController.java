package io.redlease.samples.scheduled;

import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /status}: this instance's role and token, who holds the lease, the last report. */
@RestController
public class StatusController {

    private final LeadershipContext leadership;

    private final ReportPublisher publisher;

    public StatusController(LeadershipContext leadership, ReportPublisher publisher) {
        this.leadership = leadership;
        this.publisher = publisher;
    }

    @GetMapping("/status")
    public Map<String, Object> status() {
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("instanceId", leadership.instanceId());
        status.put("role", leadership.isLeader() ? "leader" : "follower");
        leadership.token().ifPresent(token -> status.put("token", token));
        Elector.LeaseHolder holder = leadership.elector().holder().orElse(null);
        status.put("holder", holder == null ? null : holder.instanceId());
        status.put("lastPublishedReport", publisher.lastPublished());
        return status;
    }
}
