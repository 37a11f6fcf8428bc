package io.redlease.boot.autoconfigure.observation;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of redlease's observations ({@code redlease.observations.*}). */
@ConfigurationProperties("redlease.observations")
public class RedleaseObservationProperties {

    /**
     * Whether to observe leader-only runs ("redlease.leaderonly.run") and election transitions
     * ("redlease.election.transition") with the application's ObservationRegistry.
     */
    private boolean enabled = true;

    /**
     * Whether to observe redlease's own background Redis commands (acquires, renewals, heartbeats,
     * membership, subscriptions) as a traced client does; when false they start no span and no
     * timer.
     */
    private boolean engineTraffic;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isEngineTraffic() {
        return engineTraffic;
    }

    public void setEngineTraffic(boolean engineTraffic) {
        this.engineTraffic = engineTraffic;
    }
}
