package io.redlease.core.scheduling;

import java.lang.reflect.Field;
import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.support.ScheduledMethodRunnable;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@code @Scheduled} method a task that Spring schedules runs. Spring's {@code Task}
 * wraps the method's {@link ScheduledMethodRunnable} in a private runnable that tracks the outcome
 * of each run; the method is read from that wrapper's field. Should a Spring version wrap it
 * differently, the task is not recognised, Spring schedules it as it is, and each of its calls
 * fails: a once-per-slot method runs only through its slot schedule.
 */
final class ScheduledMethods {

    /**
     * Spring's wrapper: {@code org.springframework.scheduling.config.Task$OutcomeTrackingRunnable}.
     */
    static final String WRAPPER =
            "org.springframework.scheduling.config.Task$OutcomeTrackingRunnable";

    private static final @Nullable Field WRAPPED = wrappedField();

    private ScheduledMethods() {}

    /** Returns the scheduled method's runnable that a task runs, or null if it runs none. */
    static @Nullable ScheduledMethodRunnable of(Runnable task) {
        Runnable current = task;
        for (int depth = 0; depth < 4; depth++) {
            if (current instanceof ScheduledMethodRunnable method) {
                return method;
            }
            if (WRAPPED == null || !WRAPPER.equals(current.getClass().getName())) {
                return null;
            }
            current = (Runnable) ReflectionUtils.getField(WRAPPED, current);
            if (current == null) {
                return null;
            }
        }
        return null;
    }

    private static @Nullable Field wrappedField() {
        try {
            Class<?> wrapper =
                    Class.forName(WRAPPER, false, ScheduledMethods.class.getClassLoader());
            Field field = ReflectionUtils.findField(wrapper, "runnable", Runnable.class);
            if (field != null) {
                ReflectionUtils.makeAccessible(field);
            }
            return field;
        } catch (ClassNotFoundException | RuntimeException ex) {
            return null;
        }
    }
}
