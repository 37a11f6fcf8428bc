package io.redlease.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a missing required {@code redlease.*} property or a reserved election id: which property,
 * which rule, the fix. (Bad values are reported by Boot's own analyzer.)
 */
class InvalidRedleasePropertyFailureAnalyzer
        extends AbstractFailureAnalyzer<InvalidRedleasePropertyException> {

    @Override
    protected FailureAnalysis analyze(
            Throwable rootFailure, InvalidRedleasePropertyException cause) {
        String description =
                "Invalid redlease configuration:\n\n    Property: "
                        + cause.property()
                        + "\n    Value: "
                        + (cause.value() == null ? "(not set)" : cause.value())
                        + "\n    Reason: "
                        + cause.rule();
        return new FailureAnalysis(description, cause.fix(), cause);
    }
}
