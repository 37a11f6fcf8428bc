package io.redlease.boot.event;

import io.redlease.core.Elector;

/**
 * This instance found another instance leading: published once after starting and once after each
 * of its own terms.
 */
public class FollowerEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the event.
     *
     * @param elector the elector that follows
     * @param electionId the election id
     */
    public FollowerEvent(Elector elector, String electionId) {
        super(elector, electionId);
    }

    @Override
    public String toString() {
        return "FollowerEvent[" + getElectionName() + "]";
    }
}
