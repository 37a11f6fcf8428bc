package io.redlease.core.scheduling;

import java.lang.reflect.Field;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.scheduling.support.ScheduledMethodRunnable;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@code @Scheduled} method a task that Spring schedules runs. Spring's {@code Task}
 * wraps the method's {@link ScheduledMethodRunnable} in a private runnable that tracks the outcome
 * of each run, and a reactive method's task is a private runnable that subscribes to the publisher
 * the method returned once; both are read from their fields. Should a Spring version change them,
 * the task is not recognised, Spring schedules it as it is, and each of its runs fails: a
 * once-per-slot method runs only through its slot schedule.
 */
final class ScheduledMethods {

    /**
     * Spring's wrapper: {@code org.springframework.scheduling.config.Task$OutcomeTrackingRunnable}.
     */
    static final String WRAPPER =
            "org.springframework.scheduling.config.Task$OutcomeTrackingRunnable";

    /** Spring's task for a reactive method, which subscribes to the method's publisher. */
    static final String SUBSCRIBING =
            "org.springframework.scheduling.annotation.ScheduledAnnotationReactiveSupport$SubscribingRunnable";

    private static final @Nullable Field WRAPPED = field(WRAPPER, "runnable");

    private static final @Nullable Field PUBLISHER = field(SUBSCRIBING, "publisher");

    private ScheduledMethods() {}

    /** Returns the scheduled method's runnable that a task runs, or null if it runs none. */
    static @Nullable ScheduledMethodRunnable of(Runnable task) {
        return unwrap(task) instanceof ScheduledMethodRunnable method ? method : null;
    }

    /**
     * Returns the publisher that a task of a reactive {@code @Scheduled} method subscribes to, or
     * null if the task is not one.
     */
    static @Nullable Publisher<?> publisherOf(Runnable task) {
        Runnable inner = unwrap(task);
        if (PUBLISHER == null || !SUBSCRIBING.equals(inner.getClass().getName())) {
            return null;
        }
        return (Publisher<?>) ReflectionUtils.getField(PUBLISHER, inner);
    }

    private static Runnable unwrap(Runnable task) {
        Runnable current = task;
        while (WRAPPED != null && WRAPPER.equals(current.getClass().getName())) {
            Runnable inner = (Runnable) ReflectionUtils.getField(WRAPPED, current);
            if (inner == null) {
                break;
            }
            current = inner;
        }
        return current;
    }

    private static @Nullable Field field(String className, String name) {
        try {
            Class<?> type =
                    Class.forName(className, false, ScheduledMethods.class.getClassLoader());
            Field field = ReflectionUtils.findField(type, name);
            if (field != null) {
                ReflectionUtils.makeAccessible(field);
            }
            return field;
        } catch (ClassNotFoundException | LinkageError | RuntimeException ex) {
            return null;
        }
    }
}
