package io.redlease.boot.event;

import io.redlease.core.Elector;
import io.redlease.core.StepDownReason;

/**
 * A term of this instance ended; its lease was released (or the release failed and was reported).
 */
public class LeadershipRevokedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    private final StepDownReason reason;

    /**
     * Creates the event.
     *
     * @param elector the elector that stepped down
     * @param electionId the election id
     * @param reason why the term ended
     */
    public LeadershipRevokedEvent(Elector elector, String electionId, StepDownReason reason) {
        super(elector, electionId);
        this.reason = reason;
    }

    /** Returns why the term ended. */
    public StepDownReason getReason() {
        return reason;
    }

    @Override
    public String toString() {
        return "LeadershipRevokedEvent[" + getElectionName() + ", reason=" + reason + "]";
    }
}
