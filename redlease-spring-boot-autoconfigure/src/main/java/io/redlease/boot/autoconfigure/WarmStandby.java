package io.redlease.boot.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.convert.DurationStyle;

/**
 * Opens the broker connections of a follower's leader-only listener containers ahead of election
 * ({@code redlease.warm-standby}), so a container starts without a connection handshake when this
 * instance is elected. Each warm-up runs on a thread of its own, so a broker that is slow or down
 * delays neither startup, nor the election, nor another container's warm-up. A failure is logged at
 * WARN, and so is a warm-up still under way after {@code redlease.connect-timeout} (a broker that
 * does not answer, or a client that retries for ever, such as ActiveMQ's {@code failover:}
 * transport); the container connects when it starts.
 */
final class WarmStandby {

    private static final Log logger = LogFactory.getLog("io.redlease.lifecycle");

    /** The warm-ups not started yet, by container id. */
    private final Map<String, Runnable> pending = new LinkedHashMap<>();

    /** Adds a container's warm-up (from {@link ListenerContainers#warmUp}). */
    void add(String id, Runnable warmUp) {
        pending.put(id, warmUp);
    }

    /** Starts every warm-up added, each on a thread of its own. */
    void start(Duration patience) {
        pending.forEach((id, warmUp) -> start(id, warmUp, patience));
        pending.clear();
    }

    private static void start(String id, Runnable warmUp, Duration patience) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        done.orTimeout(patience.toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete(
                        (ignored, ex) -> {
                            if (ex instanceof TimeoutException) {
                                stillUnderWay(id, patience);
                            }
                        });
        Thread thread =
                new Thread(
                        () -> {
                            try {
                                warmUp.run();
                            } catch (RuntimeException ex) {
                                logger.warn(
                                        "redlease: could not open the broker connection of the"
                                                + " leader-only listener container '"
                                                + id
                                                + "' ahead of election ("
                                                + ex
                                                + "); it connects when this instance is elected");
                            } finally {
                                done.complete(null);
                            }
                        },
                        "redlease-warm-standby-" + id);
        thread.setDaemon(true);
        thread.start();
    }

    private static void stillUnderWay(String id, Duration patience) {
        ChronoUnit unit = patience.toMillis() % 1000 == 0 ? ChronoUnit.SECONDS : ChronoUnit.MILLIS;
        logger.warn(
                "redlease: the leader-only listener container '"
                        + id
                        + "' has not opened its broker connection within "
                        + DurationStyle.SIMPLE.print(patience, unit)
                        + " (redlease.connect-timeout) of warm standby; it goes on trying in the"
                        + " background, and the container connects when this instance is elected");
    }
}
