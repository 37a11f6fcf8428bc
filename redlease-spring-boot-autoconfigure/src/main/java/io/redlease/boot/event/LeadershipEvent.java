package io.redlease.boot.event;

import io.redlease.core.Elector;
import org.springframework.context.ApplicationEvent;

/**
 * A leadership transition of one election in this application; the source is the {@link Elector}.
 *
 * <p>Events of one election are published in order on its callback lane, never on the threads that
 * renew the lease: a slow listener delays only the later events of its own election (hand long work
 * to an executor, for example with {@code @Async}, to keep them prompt).
 */
public abstract class LeadershipEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final String electionId;

    LeadershipEvent(Elector elector, String electionId) {
        super(elector);
        this.electionId = electionId;
    }

    /** Returns the elector whose role changed. */
    public Elector getElector() {
        return (Elector) getSource();
    }

    /** Returns the election id ({@code default} for the main election). */
    public String getElectionId() {
        return electionId;
    }

    /** Returns the election name shared in Redis. */
    public String getElectionName() {
        return getElector().name();
    }
}
