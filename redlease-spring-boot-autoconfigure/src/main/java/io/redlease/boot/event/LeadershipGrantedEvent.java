package io.redlease.boot.event;

import io.redlease.core.Elector;

/** This instance won a term of an election. */
public class LeadershipGrantedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    private final long token;

    /**
     * Creates the event.
     *
     * @param elector the elector that won
     * @param electionId the election id
     * @param token the new term's fencing token
     */
    public LeadershipGrantedEvent(Elector elector, String electionId, long token) {
        super(elector, electionId);
        this.token = token;
    }

    /** Returns the new term's fencing token. */
    public long getToken() {
        return token;
    }

    @Override
    public String toString() {
        return "LeadershipGrantedEvent[" + getElectionName() + ", token=" + token + "]";
    }
}
