package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeaderTask;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the elections once the application context is refreshed and steps them down on shutdown.
 *
 * <p>Starting waits, bounded, for each started election's first outcome (it leads, it follows, or
 * Redis could not be reached): the scheduler registers {@code @Scheduled} tasks only after the
 * context's lifecycle beans have started, so a lone instance already leads when a leader-only job
 * first fires, instead of skipping that run and idling for a whole period. The wait is usually one
 * connection and one round trip; it is bounded by the longest connect timeout plus time to live of
 * the elections started (15 s with the defaults), and never longer than the shutdown phase timeout.
 * A follower's first outcome comes as quickly, and an unreachable Redis ends the wait with its
 * first failure (a refused connection at once, a server that does not answer at the connect
 * timeout).
 *
 * <p>Its phase ({@code redlease.shutdown-order}) is below the listener registries', so on shutdown
 * they stop first; then each elector admits no new leader-only calls, waits for those in flight,
 * ends its term and releases the lease, so a successor starts promptly and no two runs overlap. By
 * default that happens before the web server's graceful shutdown waits for requests in flight
 * ({@link #PHASE}); with {@code after-http-drain} right after it ({@link #AFTER_HTTP_DRAIN_PHASE}).
 * Either way the elections start after the web server, before the application reports itself ready.
 * The task scheduler's phase is lower still: it stops firing at the context's close, before any
 * phase, unless it is told to await its tasks; a leader-only job it fires after the term has ended
 * is refused.
 */
final class RedleaseLifecycle implements SmartLifecycle {

    /**
     * Stops after the listener registries (default phase and just below), before the web server's
     * graceful shutdown ({@code DEFAULT_PHASE - 1024}).
     */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

    /**
     * Stops right after the web server's graceful shutdown ({@code DEFAULT_PHASE - 1024}), before a
     * management server on its own port and the web server itself stop; starts after both.
     */
    static final int AFTER_HTTP_DRAIN_PHASE = SmartLifecycle.DEFAULT_PHASE - 1025;

    private static final Log logger = LogFactory.getLog(LoggingObserver.LOGGER);

    private final Elections elections;

    private final Predicate<String> autoStartup;

    private final @Nullable LeaderTask mainTask;

    private final Duration startupBudget;

    private final int phase;

    private volatile boolean running;

    /**
     * Creates the lifecycle.
     *
     * @param startupBudget the longest the start waits for first outcomes: the shutdown phase
     *     timeout
     */
    RedleaseLifecycle(
            Elections elections,
            Predicate<String> autoStartup,
            @Nullable LeaderTask mainTask,
            Duration startupBudget) {
        this(elections, autoStartup, mainTask, startupBudget, PHASE);
    }

    RedleaseLifecycle(
            Elections elections,
            Predicate<String> autoStartup,
            @Nullable LeaderTask mainTask,
            Duration startupBudget,
            int phase) {
        this.elections = elections;
        this.autoStartup = autoStartup;
        this.mainTask = mainTask;
        this.startupBudget = startupBudget;
        this.phase = phase;
    }

    /** Returns the phase of the elections' lifecycles for a shutdown order. */
    static int phase(RedleaseProperties.ShutdownOrder order) {
        return switch (order) {
            case BEFORE_HTTP_DRAIN -> PHASE;
            case AFTER_HTTP_DRAIN -> AFTER_HTTP_DRAIN_PHASE;
        };
    }

    @Override
    public void start() {
        List<Elector> started = new ArrayList<>();
        for (Map.Entry<String, Elector> entry : elections.asMap().entrySet()) {
            Elector elector = entry.getValue();
            if (autoStartup.test(entry.getKey()) && !elector.isRunning()) {
                elector.start(Elections.DEFAULT.equals(entry.getKey()) ? mainTask : null);
                started.add(elector);
            }
        }
        running = true;
        awaitFirstOutcomes(started);
    }

    /** Returns how long the start waits at most for the first outcomes of these electors. */
    Duration startupWait(List<Elector> started) {
        Duration longest = Duration.ZERO;
        for (Elector elector : started) {
            Duration wait = elector.config().connectTimeout().plus(elector.config().ttl());
            if (wait.compareTo(longest) > 0) {
                longest = wait;
            }
        }
        return longest.compareTo(startupBudget) < 0 ? longest : startupBudget;
    }

    private void awaitFirstOutcomes(List<Elector> started) {
        if (started.isEmpty()) {
            return;
        }
        Duration wait = startupWait(started);
        CompletableFuture<?>[] outcomes =
                started.stream().map(Elector::firstOutcome).toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(outcomes).get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException ex) {
            List<String> pending = new ArrayList<>();
            for (int i = 0; i < outcomes.length; i++) {
                if (!outcomes[i].isDone()) {
                    pending.add(started.get(i).name());
                }
            }
            logger.info(
                    "redlease: starting without a first outcome of "
                            + pending
                            + " after "
                            + wait.toMillis()
                            + " ms; leader-only work starts once elected");
        } catch (ExecutionException ex) {
            // A first outcome never fails: it completes with false when the attempt does.
        }
    }

    @Override
    public void stop(Runnable callback) {
        running = false;
        CompletableFuture.allOf(
                        elections.asMap().values().stream()
                                .map(Elector::stopAsync)
                                .toArray(CompletableFuture[]::new))
                .whenComplete((ignored, error) -> callback.run());
    }

    @Override
    public void stop() {
        running = false;
        elections.asMap().values().forEach(Elector::stop);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return phase;
    }
}
