package io.redlease.boot.autoconfigure;

import io.redlease.core.UnknownElectionException;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@code @LeaderOnly} election id that is not configured. */
class UnknownElectionFailureAnalyzer extends AbstractFailureAnalyzer<UnknownElectionException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnknownElectionException cause) {
        String where = "";
        for (Throwable failure = rootFailure; failure != null; failure = failure.getCause()) {
            if (failure instanceof BeanCreationException creation
                    && creation.getMessage() != null
                    && creation.getMessage().contains("@LeaderOnly")) {
                where = "\n\n    " + creation.getMessage();
                break;
            }
        }
        return new FailureAnalysis(
                "No election '"
                        + cause.electionId()
                        + "' is configured; configured elections: "
                        + cause.knownIds()
                        + where,
                "Configure it with redlease.elections."
                        + cause.electionId()
                        + ".name (and, optionally, its own timings), or use one of "
                        + cause.knownIds()
                        + " ('default' is the main election, also written as @LeaderOnly).",
                cause);
    }
}
