package io.redlease.boot.autoconfigure;

import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.util.Locale;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Logs one election's transitions to {@value #LOGGER}: INFO for elected, stepped down and follower
 * (naming the holder), WARN for a lost or expired lease and for renewal errors, and acquire and
 * release errors at WARN once per minute per election (DEBUG otherwise). Like every line redlease
 * logs, each starts with {@code redlease: }.
 */
final class LoggingObserver implements Observer {

    static final String LOGGER = "io.redlease.election";

    private static final Log logger = LogFactory.getLog(LOGGER);

    private static final long QUIET_NANOS = 60_000_000_000L;

    private final String name;

    private long lastWarning = System.nanoTime() - QUIET_NANOS;

    LoggingObserver(String name) {
        this.name = name;
    }

    @Override
    public void onElected(long token) {
        logger.info("redlease: elected leader of '" + name + "' with token " + token);
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        String message =
                "redlease: stepped down as leader of '" + name + "' (" + reason.tagValue() + ")";
        if (reason == StepDownReason.LOST || reason == StepDownReason.EXPIRED) {
            logger.warn(message + ": the lease was lost, another instance may lead now");
        } else {
            logger.info(message);
        }
    }

    @Override
    public void onFollower(@Nullable String holder) {
        logger.info(
                holder == null
                        ? "redlease: following in '"
                                + name
                                + "': the lease is free, held for a live candidate that ranks"
                                + " higher"
                        : "redlease: following in '" + name + "': instance '" + holder + "' leads");
    }

    @Override
    public void onError(Operation operation, Throwable error) {
        String message =
                "redlease: "
                        + operation.name().toLowerCase(Locale.ROOT)
                        + " of '"
                        + name
                        + "' failed: "
                        + error;
        long now = System.nanoTime();
        if (operation == Operation.RENEW || operation == Operation.TASK) {
            logger.warn(message, error);
        } else if (now - lastWarning >= QUIET_NANOS) {
            lastWarning = now;
            logger.warn(message + " (repeats are logged at DEBUG for a minute)");
        } else if (logger.isDebugEnabled()) {
            logger.debug(message, error);
        }
    }

    @Override
    public String toString() {
        return "LoggingObserver[" + name + "]";
    }
}
