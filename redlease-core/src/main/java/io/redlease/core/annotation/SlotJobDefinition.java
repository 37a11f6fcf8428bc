package io.redlease.core.annotation;

import io.redlease.core.Elections;
import java.lang.reflect.Method;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;

/**
 * A once-per-slot method as read from its annotations when its bean is created, with every rule
 * checked there: the method is {@code @Scheduled} exactly once, its trigger can be read, and the
 * maximum to catch up is not negative.
 */
record SlotJobDefinition(
        Method method,
        LeaderOnly leaderOnly,
        String beanName,
        SlotTrigger trigger,
        String scheduler) {

    /**
     * Reads a {@code @LeaderOnly} method.
     *
     * @return the definition, or null when the method is not once-per-slot or its cron expression
     *     disables it
     * @throws BeanCreationException naming the method, when a rule is broken
     */
    static @Nullable SlotJobDefinition of(
            Method method, LeaderOnly leaderOnly, String beanName, UnaryOperator<String> resolver) {
        if (!leaderOnly.oncePerSlot()) {
            if (leaderOnly.missedSlots() != MissedSlots.DEFAULT || leaderOnly.maxCatchUp() != 0) {
                throw invalid(
                        beanName,
                        method,
                        "sets missedSlots or maxCatchUp without oncePerSlot = true; they apply only"
                                + " to once-per-slot jobs");
            }
            return null;
        }
        if (leaderOnly.maxCatchUp() < 0) {
            throw invalid(
                    beanName,
                    method,
                    "sets maxCatchUp = "
                            + leaderOnly.maxCatchUp()
                            + "; it must be at least 1, or 0 for redlease.scheduling.max-catch-up");
        }
        Set<Scheduled> scheduled =
                AnnotatedElementUtils.getMergedRepeatableAnnotations(
                        method, Scheduled.class, Schedules.class);
        if (scheduled.isEmpty()) {
            throw invalid(
                    beanName,
                    method,
                    "sets oncePerSlot = true but is not @Scheduled; slots come from the method's"
                            + " @Scheduled trigger");
        }
        if (scheduled.size() > 1) {
            throw invalid(
                    beanName,
                    method,
                    "sets oncePerSlot = true and has "
                            + scheduled.size()
                            + " @Scheduled triggers; a once-per-slot job has one trigger, so"
                            + " split it into one method per trigger");
        }
        Scheduled only = scheduled.iterator().next();
        SlotTrigger trigger;
        try {
            trigger = SlotTrigger.of(only, resolver);
        } catch (IllegalArgumentException ex) {
            throw invalid(
                    beanName,
                    method,
                    "has a @Scheduled trigger redlease cannot read: " + ex.getMessage());
        }
        if (trigger == null) {
            return null;
        }
        return new SlotJobDefinition(
                method, leaderOnly, beanName, trigger, resolver.apply(only.scheduler()));
    }

    /** Returns the job's id: the bean name and the method name, joined by a dot. */
    String id() {
        return beanName + "." + method.getName();
    }

    SlotJob create(SlotJobs jobs, Object proxy) {
        return new SlotJob(
                jobs,
                id(),
                leaderOnly.value().isEmpty() ? Elections.DEFAULT : leaderOnly.value(),
                proxy,
                method,
                trigger,
                leaderOnly.missedSlots(),
                leaderOnly.maxCatchUp(),
                leaderOnly.interruptOnStepDown(),
                scheduler);
    }

    private static BeanCreationException invalid(String beanName, Method method, String rule) {
        return new BeanCreationException(
                beanName, "redlease: @LeaderOnly method " + method.toGenericString() + " " + rule);
    }
}
