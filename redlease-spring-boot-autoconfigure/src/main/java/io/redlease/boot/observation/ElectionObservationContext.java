package io.redlease.boot.observation;

import io.micrometer.observation.Observation;
import io.redlease.core.StepDownReason;
import org.jspecify.annotations.Nullable;

/** The context of an {@link ElectionObservationDocumentation#ELECTION_TRANSITION} observation. */
public class ElectionObservationContext extends Observation.Context {

    private final String election;

    private final @Nullable String instanceId;

    private final long token;

    private final @Nullable StepDownReason reason;

    /**
     * Creates the context of a transition.
     *
     * @param election the election's name
     * @param instanceId this instance's id in it, or null when unknown
     * @param token the token of the term won, or 0 for a step-down
     * @param reason why the term ended, or null for a term won
     */
    public ElectionObservationContext(
            String election,
            @Nullable String instanceId,
            long token,
            @Nullable StepDownReason reason) {
        this.election = election;
        this.instanceId = instanceId;
        this.token = token;
        this.reason = reason;
    }

    /** Returns the election's name. */
    public String getElection() {
        return election;
    }

    /** Returns this instance's id in the election, or null when unknown. */
    public @Nullable String getInstanceId() {
        return instanceId;
    }

    /** Returns the token of the term won, or 0 for a step-down. */
    public long getToken() {
        return token;
    }

    /** Returns why the term ended, or null when a term was won. */
    public @Nullable StepDownReason getReason() {
        return reason;
    }

    /** Returns whether this instance won a term (else its term ended). */
    public boolean isAcquired() {
        return reason == null;
    }
}
