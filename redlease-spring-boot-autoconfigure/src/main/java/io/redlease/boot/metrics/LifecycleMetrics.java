package io.redlease.boot.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.boot.lifecycle.LeaderLifecycles.Action;
import io.redlease.core.Elector;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of leader-only lifecycles, tag {@value RedleaseMetrics#TAG_NAME} (the election
 * name), registered when an election's lifecycles first stop or fail:
 *
 * <ul>
 *   <li>{@value #DRAIN}: timer of how long stopping an election's lifecycles took at the end of a
 *       term, from the end of the term until all stopped (or the drain timeout passed);
 *   <li>{@value #FAILURES}: counter of lifecycles that failed to start or stop, tag {@value
 *       #TAG_ACTION} (start, stop).
 * </ul>
 */
public final class LifecycleMetrics implements MeterBinder, LeaderLifecycles.Listener {

    /** Timer: stopping an election's leader-only lifecycles at the end of a term. */
    public static final String DRAIN = "redlease.lifecycle.drain";

    /** Counter: leader-only lifecycles that failed to start or stop. */
    public static final String FAILURES = "redlease.lifecycle.failures";

    /** Tag of {@value #FAILURES}: start or stop. */
    public static final String TAG_ACTION = "action";

    private volatile @Nullable MeterRegistry registry;

    @Override
    public void bindTo(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onDrained(String electionId, Elector elector, Duration drain) {
        MeterRegistry registry = this.registry;
        if (registry != null) {
            Timer.builder(DRAIN)
                    .description(
                            "Time to stop an election's leader-only lifecycles at the end of a"
                                    + " term")
                    .tag(RedleaseMetrics.TAG_NAME, elector.name())
                    .register(registry)
                    .record(drain);
            failures(registry, elector, Action.START);
            failures(registry, elector, Action.STOP);
        }
    }

    @Override
    public void onFailed(
            String electionId, Elector elector, String member, Action action, Throwable error) {
        MeterRegistry registry = this.registry;
        if (registry != null) {
            failures(registry, elector, action).increment();
        }
    }

    private static Counter failures(MeterRegistry registry, Elector elector, Action action) {
        return Counter.builder(FAILURES)
                .description("Leader-only lifecycles that failed to start or stop")
                .tag(RedleaseMetrics.TAG_NAME, elector.name())
                .tag(TAG_ACTION, action.name().toLowerCase(Locale.ROOT))
                .register(registry);
    }
}
