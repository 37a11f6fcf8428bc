package io.redlease.docs.discovery;

import io.redlease.boot.discovery.LeaderForwarder;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** Builds reports on the leader; a follower forwards the request to it. */
@RestController
class ReportController {

    private final LeadershipContext leadership;

    private final LeaderForwarder forwarder;

    private final String reportsKey;

    ReportController(
            LeadershipContext leadership,
            LeaderForwarder forwarder,
            @Value("${redlease.name}") String election) {
        this.leadership = leadership;
        this.forwarder = forwarder;
        this.reportsKey = election + ":reports";
    }

    // tag::forward[]
    @PostMapping("/reports")
    ResponseEntity<String> build(
            @RequestBody String request,
            @RequestHeader(name = LeaderForwarder.FORWARDED_HEADER, required = false)
                    String forwardedBy) {
        if (leadership.isLeader()) {
            return ResponseEntity.ok(buildReport(request)); // fenced inside, as always
        }
        if (forwardedBy != null) { // leadership moved while the request travelled:
            return ResponseEntity.status(503).build(); // let the caller retry
        }
        return forwarder.forward(
                rest ->
                        rest.post()
                                .uri("/reports")
                                .body(request)
                                .retrieve()
                                .toEntity(String.class));
    }

    // end::forward[]

    private String buildReport(String request) {
        Fencer fencer = leadership.requireFencer();
        if (!fencer.hset(reportsKey, request, leadership.instanceId())) {
            throw new IllegalStateException("term " + fencer.token() + " is over");
        }
        return "built by " + leadership.instanceId();
    }
}
