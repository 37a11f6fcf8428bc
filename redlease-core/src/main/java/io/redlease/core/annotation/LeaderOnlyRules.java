package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.interceptor.AsyncExecutionInterceptor;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.core.KotlinDetector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * The rules a {@link LeaderOnly} method is checked against when its bean is created; each broken
 * rule is a {@link BeanCreationException} that names the method and the fix.
 */
final class LeaderOnlyRules {

    private LeaderOnlyRules() {}

    /** Returns whether a proxy can advise the method: it is not static, private or final. */
    static boolean isAdvisable(Method method) {
        int modifiers = method.getModifiers();
        return !Modifier.isStatic(modifiers)
                && !Modifier.isPrivate(modifiers)
                && !Modifier.isFinal(modifiers);
    }

    /**
     * Refuses {@code @LeaderOnly} on a method no proxy can advise, where it would be silently
     * ignored: a static, private or final method annotated itself, or a final method of an
     * annotated type that a proxy would otherwise call.
     */
    static void checkAdvisable(Method method, Class<?> type, String beanName) {
        if (isAdvisable(method)) {
            return;
        }
        int modifiers = method.getModifiers();
        boolean onMethod =
                AnnotatedElementUtils.hasAnnotation(
                        AopUtils.getMostSpecificMethod(method, type), LeaderOnly.class);
        boolean reachable = !Modifier.isStatic(modifiers) && !Modifier.isPrivate(modifiers);
        if (onMethod || reachable) {
            throw invalid(
                    beanName,
                    method,
                    "is "
                            + (Modifier.isStatic(modifiers)
                                    ? "static"
                                    : Modifier.isPrivate(modifiers) ? "private" : "final")
                            + ", so no proxy can apply @LeaderOnly to it and it would run on every"
                            + " instance; make it a non-final instance method that callers reach"
                            + " through the bean");
        }
    }

    /** Checks what applies to every {@code @LeaderOnly} method. */
    static void check(Method method, Class<?> type, LeaderOnly leaderOnly, String beanName) {
        Class<?> returnType = method.getReturnType();
        if (!leaderOnly.partitions().isEmpty()) {
            checkPartitioned(method, type, leaderOnly, beanName);
        }
        if (leaderOnly.whenNotLeader() == WhenNotLeader.SKIP
                && returnType.isPrimitive()
                && returnType != void.class) {
            throw invalid(
                    beanName,
                    method,
                    "returns "
                            + returnType
                            + ", but a skipped call has no value to return; return void, a"
                            + " wrapper type or Optional, or use whenNotLeader = REJECT");
        }
        if (!leaderOnly.oncePerSlot()
                && (leaderOnly.missedSlots() != MissedSlots.DEFAULT
                        || leaderOnly.maxCatchUp() != 0)) {
            throw invalid(
                    beanName,
                    method,
                    "sets missedSlots or maxCatchUp without oncePerSlot = true; they apply only"
                            + " to once-per-slot jobs");
        }
    }

    /** Checks a method that runs once per owned partition ({@code partitions} set). */
    private static void checkPartitioned(
            Method method, Class<?> type, LeaderOnly leaderOnly, String beanName) {
        if (!leaderOnly.value().isEmpty()) {
            throw invalid(
                    beanName,
                    method,
                    "sets both value = \""
                            + leaderOnly.value()
                            + "\" and partitions = \""
                            + leaderOnly.partitions()
                            + "\"; a method runs in one election or once per owned partition of"
                            + " one partitioned election; keep one of them");
        }
        if (method.getReturnType() != void.class) {
            throw invalid(
                    beanName,
                    method,
                    "sets partitions = \""
                            + leaderOnly.partitions()
                            + "\" and returns "
                            + method.getReturnType().getName()
                            + ", but it runs once per owned partition and one call has no single"
                            + " result (a publisher or future would also outlive its partition's"
                            + " check); return void");
        }
        if (AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(type, Async.class)
                || AnnotatedElementUtils.hasAnnotation(method.getDeclaringClass(), Async.class)) {
            throw invalid(
                    beanName,
                    method,
                    "sets partitions = \""
                            + leaderOnly.partitions()
                            + "\" and is @Async: each partition's run would be handed to another"
                            + " thread and outlive its partition's check and term; remove @Async"
                            + " (the scheduler already runs the method on its own thread) or"
                            + " start the asynchronous work from the run");
        }
    }

    /**
     * Refuses a {@code @LeaderOnly} method that asynchronous advice on the bean's proxy applies to
     * where it may not ({@link #asyncRefusal}), whatever annotation selects it ({@code
     * EnableAsync(annotation = ...)}): like {@code Async}, it would hand each call to another
     * thread.
     */
    static void checkNotAsync(Object bean, Class<?> type, String beanName) {
        if (!(bean instanceof Advised advised)) {
            return;
        }
        Advisor[] advisors = advised.getAdvisors();
        for (Method method :
                ReflectionUtils.getUniqueDeclaredMethods(
                        type, ReflectionUtils.USER_DECLARED_METHODS)) {
            LeaderOnly leaderOnly = LeaderOnlyInterceptor.find(method, type);
            if (leaderOnly == null || !isAdvisable(method)) {
                continue;
            }
            String refusal = asyncRefusal(advisors, method, type, leaderOnly);
            if (refusal != null) {
                throw invalid(beanName, method, refusal);
            }
        }
    }

    /**
     * Returns why a {@code @LeaderOnly} method may not run through the given advice, or null:
     * asynchronous advice applies to a partitioned method, or sits inside {@code @LeaderOnly}'s own
     * advice on any other method (the method would start on the executor's thread after the check,
     * with no term bound).
     */
    static @Nullable String asyncRefusal(
            Advisor[] advisors, Method method, Class<?> type, LeaderOnly leaderOnly) {
        boolean partitioned = !leaderOnly.partitions().isEmpty();
        boolean inside = false;
        for (Advisor advisor : advisors) {
            Object advice = advisor.getAdvice();
            if (advice instanceof LeaderOnlyInterceptor) {
                inside = true;
            } else if (advice instanceof AsyncExecutionInterceptor
                    && (partitioned || inside)
                    && (!(advisor instanceof PointcutAdvisor pointcut)
                            || AopUtils.canApply(pointcut.getPointcut(), type)
                                    && pointcut.getPointcut()
                                            .getMethodMatcher()
                                            .matches(method, type))) {
                if (!partitioned) {
                    return "runs through asynchronous advice ordered inside @LeaderOnly ("
                            + advisor
                            + "): the method would start on the executor's thread after the"
                            + " leadership check, with no term bound, even past the term's"
                            + " deadline; put @Async outside @LeaderOnly (its default order: leave"
                            + " @EnableAsync's order unset), so that the check runs on the"
                            + " executor's thread, or remove @Async";
                }
                return "sets partitions = \""
                        + leaderOnly.partitions()
                        + "\" and runs through asynchronous advice ("
                        + advisor
                        + "): each call would be handed to another thread and outlive its"
                        + " partitions' checks and terms; remove the asynchronous annotation (the"
                        + " scheduler already runs the method on its own thread) or start the"
                        + " asynchronous work from the run";
            }
        }
        return null;
    }

    /**
     * Checks a once-per-slot method and defines its job.
     *
     * @return the job's definition, or null when the method is not once-per-slot
     */
    static SlotJobs.@Nullable Definition slotJob(
            Method method,
            Class<?> type,
            LeaderOnly leaderOnly,
            String beanName,
            UnaryOperator<String> resolver) {
        if (!leaderOnly.oncePerSlot()) {
            return null;
        }
        int maxCatchUp = leaderOnly.maxCatchUp();
        if (maxCatchUp < 0 || maxCatchUp > SlotJobs.MAX_CATCH_UP) {
            throw invalid(
                    beanName,
                    method,
                    "sets maxCatchUp = "
                            + maxCatchUp
                            + "; it must be at least 1 and at most "
                            + SlotJobs.MAX_CATCH_UP
                            + ", or 0 for redlease.scheduling.max-catch-up");
        }
        if (AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(type, Async.class)) {
            throw invalid(
                    beanName,
                    method,
                    "sets oncePerSlot = true and is @Async: the call would return before the"
                            + " method ran, and the slot would be marked for work not done;"
                            + " remove @Async (the scheduler already runs the method on its own"
                            + " thread) or call the asynchronous work from the job");
        }
        Class<?> returnType = method.getReturnType();
        if (KotlinDetector.isKotlinPresent() && KotlinDetector.isSuspendingFunction(method)) {
            throw invalid(
                    beanName,
                    method,
                    "sets oncePerSlot = true and is a Kotlin suspend function, which Spring"
                            + " schedules without a publisher redlease can run per slot; return a"
                            + " Mono or a Flux (for instance mono { ... }), or drop oncePerSlot");
        }
        if (Future.class.isAssignableFrom(returnType)
                || CompletionStage.class.isAssignableFrom(returnType)) {
            throw invalid(
                    beanName,
                    method,
                    "sets oncePerSlot = true and returns "
                            + returnType.getName()
                            + ": a run ends when the method returns, so it must return once its"
                            + " work is done; return void");
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
        if (!StringUtils.hasText(only.cron())
                && only.fixedRate() < 0
                && !StringUtils.hasText(only.fixedRateString())
                && only.fixedDelay() < 0
                && !StringUtils.hasText(only.fixedDelayString())) {
            throw invalid(
                    beanName,
                    method,
                    "sets oncePerSlot = true on a @Scheduled one-time task; a once-per-slot job"
                            + " needs cron, fixedRate or fixedDelay");
        }
        String cron = only.cron().isEmpty() ? "" : resolver.apply(only.cron());
        String partitions = leaderOnly.partitions();
        return new SlotJobs.Definition(
                beanName + "." + method.getName(),
                !partitions.isEmpty()
                        ? partitions
                        : leaderOnly.value().isEmpty() ? Elections.DEFAULT : leaderOnly.value(),
                leaderOnly.missedSlots(),
                maxCatchUp,
                leaderOnly.interruptOnStepDown(),
                Scheduled.CRON_DISABLED.equals(cron),
                partitions);
    }

    /** Refuses once-per-slot settings on a type: they apply to one method each. */
    static void checkType(Class<?> type, String beanName) {
        LeaderOnly onType = AnnotatedElementUtils.findMergedAnnotation(type, LeaderOnly.class);
        if (onType != null && !onType.partitions().isEmpty()) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @LeaderOnly on type "
                            + type.getName()
                            + " sets partitions, which runs each call once per owned partition;"
                            + " put @LeaderOnly(partitions = \""
                            + onType.partitions()
                            + "\") on the void methods that should run that way instead");
        }
        if (onType != null
                && (onType.oncePerSlot()
                        || onType.missedSlots() != MissedSlots.DEFAULT
                        || onType.maxCatchUp() != 0)) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @LeaderOnly on type "
                            + type.getName()
                            + " sets oncePerSlot, missedSlots or maxCatchUp, which apply to one"
                            + " @Scheduled method each; put @LeaderOnly(oncePerSlot = true) on the"
                            + " methods instead");
        }
    }

    static BeanCreationException invalid(String beanName, Method method, String rule) {
        return new BeanCreationException(
                beanName, "redlease: @LeaderOnly method " + method.toGenericString() + " " + rule);
    }

    /**
     * Returns whether the type is a leader-only lifecycle bean: {@code @LeaderOnly} on a class that
     * implements {@link org.springframework.context.Lifecycle}. Its methods are not advised: the
     * bean is started when this instance is elected and stopped when the term ends (Spring Boot's
     * auto-configuration does that). A {@code @LeaderOnly} method in such a class is refused.
     */
    static boolean isLifecycleType(Class<?> type, String beanName) {
        if (!org.springframework.context.Lifecycle.class.isAssignableFrom(type)
                || !AnnotatedElementUtils.hasAnnotation(type, LeaderOnly.class)) {
            return false;
        }
        LeaderOnly onType = AnnotatedElementUtils.findMergedAnnotation(type, LeaderOnly.class);
        if (onType != null && !onType.partitions().isEmpty()) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @LeaderOnly(partitions = \""
                            + onType.partitions()
                            + "\") on lifecycle bean "
                            + type.getName()
                            + ": a leader-only lifecycle bean runs with one election, not per"
                            + " partition; use @LeaderOnly(\"<election id>\"), or start per-partition"
                            + " work from a PartitionAssignedEvent listener");
        }
        for (Method method :
                ReflectionUtils.getUniqueDeclaredMethods(
                        type, ReflectionUtils.USER_DECLARED_METHODS)) {
            if (AnnotatedElementUtils.hasAnnotation(method, LeaderOnly.class)) {
                throw new BeanCreationException(
                        beanName,
                        "redlease: "
                                + method.toGenericString()
                                + " is @LeaderOnly in a @LeaderOnly lifecycle bean, which runs"
                                + " only while leading as a whole; remove the method's"
                                + " annotation, or move the method to another bean");
            }
        }
        return true;
    }
}
