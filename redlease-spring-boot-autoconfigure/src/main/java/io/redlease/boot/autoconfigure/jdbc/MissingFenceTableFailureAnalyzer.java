package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.jdbc.MissingFenceTableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a missing fence table: which table, and the script or setting that creates it. */
class MissingFenceTableFailureAnalyzer extends AbstractFailureAnalyzer<MissingFenceTableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, MissingFenceTableException cause) {
        return new FailureAnalysis(
                "The redlease fence table '"
                        + cause.table()
                        + "' does not exist (or lacks its columns name, token, stamps), and"
                        + " redlease.jdbc.initialize-schema does not create it for this database.",
                "Create it with "
                        + cause.script()
                        + (cause.table().equals(io.redlease.jdbc.FenceTable.DEFAULT_NAME)
                                ? ""
                                : " (changing the table name to " + cause.table() + ")")
                        + " in your migrations, or set redlease.jdbc.initialize-schema=always.",
                cause);
    }
}
