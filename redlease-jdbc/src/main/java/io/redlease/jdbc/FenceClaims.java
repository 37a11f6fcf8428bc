package io.redlease.jdbc;

import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Claims the fence row of each newly elected term in every fence table right away, so that the
 * election fences the database the way the acquire fences Redis: once a term's claim has taken the
 * row, no fenced transaction of an older term commits there unless it stamped before (it then
 * commits before the claim, which is ordered before the new term).
 *
 * <p>Add {@link #observer(String)} to each election's {@code ElectorConfig} (Spring Boot does this
 * for every elector it builds). A claim runs on a thread of its own per election, never on the
 * engine's threads nor on the election's callback lane, in a transaction of its own that waits for
 * the row's lock at most the claim timeout. While it fails (the database is unreachable, or an
 * older term's transaction holds the row between its stamp and its commit) it is retried with a
 * growing delay, up to 5 seconds, for as long as the term lasts; each failure is reported to the
 * {@link FencedTransactionListener} and logged at WARN (the first, then once a minute). Until the
 * claim succeeds, the window of the README's guarantee stays open: a transaction of an older term
 * that stamps first can still commit.
 */
public final class FenceClaims implements AutoCloseable {

    /** The default claim timeout: how long one claim waits for the fence row's lock. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    private static final long FIRST_RETRY_MILLIS = 100;

    private static final long MAX_RETRY_MILLIS = 5_000;

    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final List<FenceTable> tables;

    private final Duration timeout;

    private final FencedTransactionListener listener;

    private final Map<String, ElectionClaims> elections = new ConcurrentHashMap<>();

    private volatile boolean closed;

    /**
     * Creates the claims for one fence table with the default timeout.
     *
     * @param table the fence table
     */
    public FenceClaims(FenceTable table) {
        this(List.of(table), DEFAULT_TIMEOUT, new FencedTransactionListener() {});
    }

    /**
     * Creates the claims.
     *
     * @param tables the fence tables, one per fenced data source
     * @param timeout how long one claim waits for the row's lock (at least one second: it is a JDBC
     *     query timeout)
     * @param listener hears every claim and every failed attempt
     */
    public FenceClaims(
            List<FenceTable> tables, Duration timeout, FencedTransactionListener listener) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException(
                    "redlease: the claim timeout must be positive, but was " + timeout);
        }
        this.tables = List.copyOf(tables);
        this.timeout = timeout;
        this.listener = listener;
    }

    /**
     * Returns the observer that claims the rows of an election's newly elected terms; the same one
     * for the same name.
     *
     * @param electionName the election name
     * @return the observer, for {@code ElectorConfig.Builder.observer}
     */
    public Observer observer(String electionName) {
        return elections.computeIfAbsent(electionName, ElectionClaims::new);
    }

    /** Stops every claim in progress and the claim threads. */
    @Override
    public void close() {
        closed = true;
        elections.values().forEach(ElectionClaims::close);
    }

    @Override
    public String toString() {
        return "FenceClaims" + tables;
    }

    /** The claims of one election: the current term's, retried until done or the term ends. */
    private final class ElectionClaims implements Observer {

        private final String electionName;

        private volatile long current;

        private @Nullable ScheduledThreadPoolExecutor executor;

        ElectionClaims(String electionName) {
            this.electionName = electionName;
        }

        @Override
        public void onElected(long token) {
            current = token;
            for (FenceTable table : tables) {
                schedule(new Claim(table, token), 0);
            }
        }

        @Override
        public void onSteppedDown(StepDownReason reason) {
            current = 0;
        }

        private synchronized void schedule(Claim claim, long delayMillis) {
            if (closed) {
                return;
            }
            ScheduledThreadPoolExecutor running = executor;
            if (running == null) {
                AtomicInteger threads = new AtomicInteger();
                running =
                        new ScheduledThreadPoolExecutor(
                                1,
                                task -> {
                                    Thread thread =
                                            new Thread(
                                                    task,
                                                    "redlease-fence-claim-"
                                                            + electionName
                                                            + "-"
                                                            + threads.incrementAndGet());
                                    thread.setDaemon(true);
                                    return thread;
                                });
                running.setKeepAliveTime(1, TimeUnit.MINUTES);
                running.allowCoreThreadTimeOut(true);
                running.setRemoveOnCancelPolicy(true);
                executor = running;
            }
            try {
                running.schedule(claim, delayMillis, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException ex) {
                // closed meanwhile
            }
        }

        synchronized void close() {
            if (executor != null) {
                executor.shutdownNow();
            }
        }

        /** One claim of one term in one table, rescheduling itself while it fails. */
        private final class Claim implements Runnable {

            private final FenceTable table;

            private final long token;

            private int failures;

            private long lastWarn;

            Claim(FenceTable table, long token) {
                this.table = table;
                this.token = token;
            }

            @Override
            public void run() {
                if (closed || current != token) {
                    return;
                }
                try {
                    long held = table.claim(electionName, token, timeout);
                    if (failures > 0) {
                        logger.info(
                                "redlease: term "
                                        + token
                                        + " of '"
                                        + electionName
                                        + "' claimed its row of "
                                        + table.name()
                                        + " after "
                                        + failures
                                        + " failed attempts"
                                        + (held > token ? " (a newer term holds it)" : ""));
                    }
                    notify(() -> listener.onClaimed(electionName, token, table.name()));
                } catch (RuntimeException ex) {
                    failures++;
                    long delay =
                            Math.min(
                                    MAX_RETRY_MILLIS,
                                    FIRST_RETRY_MILLIS << Math.min(failures - 1, 16));
                    long now = System.nanoTime();
                    if (failures == 1 || now - lastWarn >= WARN_EVERY_NANOS) {
                        lastWarn = now;
                        logger.warn(
                                "redlease: term "
                                        + token
                                        + " of '"
                                        + electionName
                                        + "' cannot claim its row of "
                                        + table.name()
                                        + " (attempt "
                                        + failures
                                        + "; retrying every "
                                        + MAX_RETRY_MILLIS / 1000
                                        + " s at most while the term lasts): until it does, a"
                                        + " fenced transaction of an older term that stamps"
                                        + " first can still commit. "
                                        + ex);
                    }
                    notify(() -> listener.onClaimFailed(electionName, token, table.name(), ex));
                    schedule(this, delay);
                }
            }

            private void notify(Runnable call) {
                try {
                    call.run();
                } catch (RuntimeException ex) {
                    logger.warn("redlease: a FencedTransactionListener threw; ignored", ex);
                }
            }
        }
    }
}
