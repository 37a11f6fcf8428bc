package io.redlease.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@code redlease.*} property that breaks a rule: which property, which rule, the fix.
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
