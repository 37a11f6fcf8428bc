package io.redlease.boot.autoconfigure.health;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of the opt-in leader health indicator ({@code redlease.health.leader.*}). */
@ConfigurationProperties("redlease.health.leader")
public class RedleaseLeaderHealthProperties {

    /**
     * Whether to add the "redleaseLeader" health indicator (UP while this instance leads, FOLLOWER
     * otherwise), for a health group of its own; never put it in readiness or liveness.
     */
    private boolean enabled;

    /** Id of the election the indicator reports on; empty for the main election. */
    private String election = "";

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getElection() {
        return election;
    }

    public void setElection(String election) {
        this.election = election;
    }
}
