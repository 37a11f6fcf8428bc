package io.redlease.core.scheduling;

import io.micrometer.context.ThreadLocalAccessor;
import io.redlease.core.Slot;
import org.jspecify.annotations.Nullable;

/**
 * Carries the slot of a once-per-slot run to the threads that continue its work, through Micrometer
 * context propagation (Reactor operators under automatic context propagation, tasks decorated with
 * Spring's {@code ContextPropagatingTaskDecorator}), so that {@link
 * io.redlease.core.LeadershipContext#slot()} answers there too. A reactive run's subscription
 * carries its slot in its Reactor {@code Context} under {@link #KEY}.
 *
 * <p>Registered with context propagation through {@code META-INF/services}.
 */
public final class SlotAccessor implements ThreadLocalAccessor<Slot> {

    /** The key of the slot, in context propagation and in a Reactor {@code Context}. */
    public static final String KEY = "io.redlease.slot";

    @Override
    public Object key() {
        return KEY;
    }

    @Override
    public @Nullable Slot getValue() {
        return SlotRun.current();
    }

    @Override
    public void setValue(Slot slot) {
        SlotRun.propagate(slot);
    }

    @Override
    public void setValue() {
        SlotRun.propagate(null);
    }
}
