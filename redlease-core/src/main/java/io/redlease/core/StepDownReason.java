package io.redlease.core;

import java.util.Locale;

/** Why a leadership term ended. */
public enum StepDownReason {

    /** A renewal found the lease gone or held by another instance. */
    LOST,

    /** No renewal succeeded within the time to live, counted from the last successful send. */
    EXPIRED,

    /** {@link Elector#resign()} was called. */
    RESIGNED,

    /** The leader task returned. */
    TASK_ENDED,

    /** The leader task threw; the throwable was reported to the observers. */
    TASK_FAILED,

    /** The elector was stopped. */
    SHUTDOWN,

    /**
     * The engine failed unexpectedly while leading; the failure was logged at ERROR and reported to
     * the observers, and the elector contends again.
     */
    INTERNAL_ERROR;

    /** Returns the lowercase, hyphenated form used in metrics and logs, e.g. {@code task-ended}. */
    public String tagValue() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
