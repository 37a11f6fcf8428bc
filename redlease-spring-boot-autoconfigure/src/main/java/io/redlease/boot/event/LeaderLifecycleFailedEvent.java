package io.redlease.boot.event;

import io.redlease.boot.lifecycle.LeaderLifecycles.Action;
import io.redlease.core.Elector;

/**
 * A leader-only lifecycle (a {@code @LeaderOnly} lifecycle bean or a listener container named in
 * {@code redlease.lifecycle.listeners}) failed to start after election, or to stop at the end of a
 * term within the drain timeout. The election goes on; the other lifecycles still start or stop.
 * Published on the election's lifecycle thread.
 */
public class LeaderLifecycleFailedEvent extends LeadershipEvent {

    private static final long serialVersionUID = 1L;

    private final String member;

    private final Action action;

    private final transient Throwable error;

    /**
     * Creates the event.
     *
     * @param elector the election's elector
     * @param electionId the election id
     * @param member the bean name or listener id
     * @param action what failed
     * @param error the failure
     */
    public LeaderLifecycleFailedEvent(
            Elector elector, String electionId, String member, Action action, Throwable error) {
        super(elector, electionId);
        this.member = member;
        this.action = action;
        this.error = error;
    }

    /** Returns the bean name or listener id of the lifecycle that failed. */
    public String getMember() {
        return member;
    }

    /** Returns what it failed to do. */
    public Action getAction() {
        return action;
    }

    /** Returns the failure. */
    public Throwable getError() {
        return error;
    }
}
