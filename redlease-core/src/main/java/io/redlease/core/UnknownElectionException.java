package io.redlease.core;

import java.util.Set;

/** Thrown when an election id is used that no {@link Elections} registry knows. */
public class UnknownElectionException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String electionId;

    private final Set<String> knownIds;

    UnknownElectionException(String electionId, Set<String> knownIds) {
        this("election", electionId, knownIds);
    }

    UnknownElectionException(String kind, String electionId, Set<String> knownIds) {
        super("redlease: no " + kind + " '" + electionId + "' is configured; known: " + knownIds);
        this.electionId = electionId;
        this.knownIds = Set.copyOf(knownIds);
    }

    /** Returns the id that was asked for. */
    public String electionId() {
        return electionId;
    }

    /** Returns the ids that exist. */
    public Set<String> knownIds() {
        return knownIds;
    }
}
