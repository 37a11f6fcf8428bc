package io.redlease.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports why redlease's auto-configuration did not apply while redlease is enabled, and the fix.
 */
class RedleaseUnavailableFailureAnalyzer
        extends AbstractFailureAnalyzer<RedleaseUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, RedleaseUnavailableException cause) {
        return new FailureAnalysis(
                "redlease is enabled (redlease.enabled is not false), but its auto-configuration"
                        + " did not apply, so there is no leader election, no LeadershipContext and"
                        + " no Elections bean:\n\n    Reason: "
                        + cause.reason(),
                cause.fix(),
                cause);
    }
}
