package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeaderTask;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the elections once the application context is refreshed and steps them down on shutdown.
 *
 * <p>Its phase is below the task scheduler's and the web server's graceful shutdown, so on shutdown
 * they stop first; then each elector admits no new leader-only calls, waits for those in flight,
 * ends its term and releases the lease, so a successor starts promptly and no two runs overlap.
 */
final class RedleaseLifecycle implements SmartLifecycle {

    /** Stops after the task scheduler (default phase) and the web server's graceful shutdown. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

    private final Elections elections;

    private final Predicate<String> autoStartup;

    private final @Nullable LeaderTask mainTask;

    private volatile boolean running;

    RedleaseLifecycle(
            Elections elections, Predicate<String> autoStartup, @Nullable LeaderTask mainTask) {
        this.elections = elections;
        this.autoStartup = autoStartup;
        this.mainTask = mainTask;
    }

    @Override
    public void start() {
        for (Map.Entry<String, Elector> entry : elections.asMap().entrySet()) {
            Elector elector = entry.getValue();
            if (autoStartup.test(entry.getKey()) && !elector.isRunning()) {
                elector.start(Elections.DEFAULT.equals(entry.getKey()) ? mainTask : null);
            }
        }
        running = true;
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
        return PHASE;
    }
}
