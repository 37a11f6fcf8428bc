package io.redlease.boot.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlySkipListener;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Micrometer meters for {@link LeaderOnly @LeaderOnly} methods, fed as a {@link
 * LeaderOnlySkipListener}:
 *
 * <ul>
 *   <li>{@value #SKIPPED}: counter of calls skipped because this instance did not lead (a
 *       follower's scheduled runs, the runs before the first election), tags {@value #TAG_NAME}
 *       (the election name; the partitioned election's for a method that runs per partition) and
 *       {@value #TAG_METHOD} ({@code SimpleClassName.method}). Registered at zero for every
 *       {@code @LeaderOnly} method of a singleton bean once the singletons exist. Rejected calls
 *       ({@code whenNotLeader = REJECT}) throw to their caller and are not counted; a once-per-slot
 *       job's slots are counted by {@link SlotMetrics}.
 * </ul>
 */
public final class LeaderOnlyMetrics implements MeterBinder, LeaderOnlySkipListener {

    /** Counter: {@code @LeaderOnly} calls skipped because this instance did not lead. */
    public static final String SKIPPED = "redlease.leaderonly.skipped";

    /** Tag: the election name. */
    public static final String TAG_NAME = "name";

    /** Tag: the method, as {@code SimpleClassName.method}. */
    public static final String TAG_METHOD = "method";

    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    private final Set<MethodKey> methods = ConcurrentHashMap.newKeySet();

    private final Map<MeterRegistry, Map<MethodKey, Counter>> counters = new ConcurrentHashMap<>();

    private record MethodKey(String election, String method) {}

    @Override
    public void bindTo(MeterRegistry registry) {
        registries.add(registry);
        methods.forEach(key -> counter(registry, key));
    }

    @Override
    public void onAdvised(MethodRef method) {
        MethodKey key = new MethodKey(method.election(), method.name());
        if (methods.add(key)) {
            registries.forEach(registry -> counter(registry, key));
        }
    }

    @Override
    public void onSkipped(MethodRef method, Reason reason) {
        MethodKey key = new MethodKey(method.election(), method.name());
        methods.add(key);
        for (MeterRegistry registry : registries) {
            counter(registry, key).increment();
        }
    }

    private Counter counter(MeterRegistry registry, MethodKey key) {
        return counters.computeIfAbsent(registry, ignored -> new ConcurrentHashMap<>())
                .computeIfAbsent(
                        key,
                        ignored ->
                                Counter.builder(SKIPPED)
                                        .tag(TAG_NAME, key.election())
                                        .tag(TAG_METHOD, key.method())
                                        .description(
                                                "@LeaderOnly calls skipped because this instance"
                                                        + " did not lead")
                                        .register(registry));
    }
}
