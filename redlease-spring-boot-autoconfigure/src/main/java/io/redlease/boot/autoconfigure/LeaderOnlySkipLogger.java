package io.redlease.boot.autoconfigure;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlySkipListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Logs each skipped {@link LeaderOnly @LeaderOnly} call at DEBUG, on the logger {@code
 * io.redlease.core.annotation.LeaderOnly}: which method, which election, and why.
 */
final class LeaderOnlySkipLogger implements LeaderOnlySkipListener {

    /** The logger's name: that of the annotation, so that it is easy to find. */
    static final String LOGGER_NAME = LeaderOnly.class.getName();

    private static final Log logger = LogFactory.getLog(LOGGER_NAME);

    @Override
    public void onSkipped(MethodRef method, Reason reason) {
        if (logger.isDebugEnabled()) {
            logger.debug(
                    "redlease: skipped "
                            + method.name()
                            + "(): "
                            + switch (reason) {
                                case NOT_LEADER ->
                                        "this instance does not lead '"
                                                + method.election()
                                                + "' (yet)";
                                case TERM_ENDED ->
                                        "the term of '"
                                                + method.election()
                                                + "' it would run in has ended";
                                case NO_PARTITION ->
                                        "this instance owns no partition of '"
                                                + method.election()
                                                + "'";
                            });
        }
    }
}
