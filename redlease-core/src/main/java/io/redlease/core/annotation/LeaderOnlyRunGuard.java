package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.core.partition.PartitionedElection;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;

/**
 * The innermost advice on a blocking {@code @LeaderOnly} method: the method itself starts only
 * inside the term its call was admitted in, checked again right before it. Between {@link
 * LeaderOnlyInterceptor}'s check and the method run the {@link LeaderOnlyRunListener}s and any
 * advice ordered inside {@code @LeaderOnly} (a transaction whose begin waits, a retry); a term that
 * passed its deadline meanwhile refuses the method here (a nested call of the term, a {@link
 * io.redlease.core.TermEndedException} before the start, which the run takes as not started).
 *
 * <p>On a {@code @LeaderOnly(partitions = ...)} method it also makes sure the method runs only on
 * the thread making a run of an active term of a partition of its election: {@link
 * PartitionedLeaderOnly} binds that term around each run; advice between the two that calls the
 * method on another thread (even one the term was propagated to) or again after the run's term
 * ended (a retry of a run that was cut short) is refused here. On any other method, a call that
 * reaches it on a thread working for no term of its election (advice in front of it handed the call
 * to another thread) is refused.
 *
 * <p>One guard per proxy; what it checks of each method is worked out once.
 */
final class LeaderOnlyRunGuard implements MethodInterceptor {

    private final Supplier<Elections> elections;

    /** What is checked before each method, worked out at its first call. */
    private final Map<Method, Optional<Check>> checks = new ConcurrentHashMap<>();

    LeaderOnlyRunGuard(Supplier<Elections> elections) {
        this.elections = elections;
    }

    /**
     * What the guard checks before a method.
     *
     * @param elector the method's election, or null for a partitioned method
     * @param partitioned the method's partitioned election, or null
     */
    private record Check(@Nullable Elector elector, @Nullable PartitionedElection partitioned) {}

    /**
     * Returns whether a {@code @LeaderOnly} method runs through the guard: a partitioned one, or
     * one whose call returns once the work is done (no publisher, no stage, no suspending
     * function).
     */
    static boolean guards(Method method, @Nullable Class<?> targetClass) {
        LeaderOnly leaderOnly = LeaderOnlyInterceptor.find(method, targetClass);
        if (leaderOnly == null) {
            return false;
        }
        return !leaderOnly.partitions().isEmpty()
                || (ReactiveLeaderOnly.adapter(method) == null
                        && !CompletionStage.class.isAssignableFrom(method.getReturnType()));
    }

    /**
     * Checks, at a call of a {@code @LeaderOnly} method through its proxy, what the startup checks
     * could not see on a bean created after them (a lazy or prototype bean): refuses the call when
     * asynchronous advice applies to the method where it may not ({@link
     * LeaderOnlyRules#asyncRefusal}), and moves the guard innermost when advice that a later
     * post-processor added sits inside it.
     *
     * @return whether the guard moved, so that the call must go through the proxy again (its chain
     *     was built before the move)
     */
    static boolean verify(
            MethodInvocation invocation,
            Method method,
            @Nullable Class<?> targetClass,
            LeaderOnly leaderOnly) {
        if (!(invocation instanceof ProxyMethodInvocation proxied)
                || !(proxied.getProxy() instanceof Advised advised)) {
            return false;
        }
        Advisor[] advisors = advised.getAdvisors();
        Class<?> type = targetClass != null ? targetClass : method.getDeclaringClass();
        String refusal = LeaderOnlyRules.asyncRefusal(advisors, method, type, leaderOnly);
        if (refusal != null) {
            throw new IllegalStateException(
                    "redlease: @LeaderOnly method " + method.toGenericString() + " " + refusal);
        }
        Advisor guard = misplacedGuard(advisors);
        if (guard == null) {
            return false;
        }
        if (advised.removeAdvisor(guard)) {
            advised.addAdvisor(guard);
        }
        if (!(advisors[0].getAdvice() instanceof LeaderOnlyInterceptor)) {
            // Going through the proxy again would run the advice in front of redlease's twice:
            // refuse this call; the next one runs through the new chain.
            throw new IllegalStateException(
                    "redlease: @LeaderOnly method "
                            + method.toGenericString()
                            + " had advice that a post-processor added after redlease's inside its"
                            + (leaderOnly.partitions().isEmpty()
                                    ? " deadline check"
                                    : " partition check")
                            + " (a bean created after startup); the check is now"
                            + " innermost, and this call did not run");
        }
        return true;
    }

    /**
     * Moves the proxy's run guard innermost when advice that a later post-processor added sits
     * inside it (a bean created after startup, before its first call).
     */
    static void moveInnermost(Advised advised) {
        if (advised.isFrozen()) {
            return;
        }
        Advisor guard = misplacedGuard(advised.getAdvisors());
        if (guard != null && advised.removeAdvisor(guard)) {
            advised.addAdvisor(guard);
        }
    }

    /**
     * Returns the run guard's advisor when advice other than redlease's own sits inside it, or null
     * when the guard is innermost (or absent).
     */
    private static @Nullable Advisor misplacedGuard(Advisor[] advisors) {
        Advisor guard = null;
        boolean foreignInside = false;
        for (Advisor advisor : advisors) {
            if (advisor.getAdvice() instanceof LeaderOnlyRunGuard) {
                guard = advisor;
            } else if (guard != null && !isOwn(advisor)) {
                foreignInside = true;
            }
        }
        return foreignInside ? guard : null;
    }

    /** Returns whether the advisor is redlease's own innermost advice (a once-per-slot run's). */
    private static boolean isOwn(Advisor advisor) {
        return advisor.getAdvice().getClass().getName().startsWith("io.redlease.core.");
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Optional<Check> found = checks.get(method);
        if (found == null) {
            found = checks.computeIfAbsent(method, key -> check(invocation));
        }
        Check check = found.orElse(null);
        if (check == null) {
            return invocation.proceed();
        }
        Term term;
        Elector elector = check.elector();
        if (elector != null) {
            term = elector.boundTerm().orElse(null);
            if (term == null) {
                throw new IllegalStateException(
                        "redlease: "
                                + method.getDeclaringClass().getSimpleName()
                                + "."
                                + method.getName()
                                + "() runs only inside a term of '"
                                + elector.name()
                                + "', and the thread it was entered on works for none (advice"
                                + " in front of it called it on another thread); advice inside"
                                + " @LeaderOnly must call the method on the calling thread, within"
                                + " the call");
            }
        } else {
            term = partitionTerm(method, Objects.requireNonNull(check.partitioned()));
        }
        try {
            // A nested call of the term: refused before the method starts (a TermEndedException,
            // which the run takes as not started) when the term passed its deadline since the call
            // was admitted.
            return term.execute(new LeaderOnlyInterceptor.Call(invocation), false);
        } catch (UndeclaredThrowableException ex) {
            throw ex.getUndeclaredThrowable();
        }
    }

    private Optional<Check> check(MethodInvocation invocation) {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : null;
        if (!guards(method, targetClass)) {
            return Optional.empty();
        }
        LeaderOnly leaderOnly =
                Objects.requireNonNull(LeaderOnlyInterceptor.find(method, targetClass));
        Elections all = elections.get();
        return Optional.of(
                leaderOnly.partitions().isEmpty()
                        ? new Check(all.get(leaderOnly.value()), null)
                        : new Check(null, all.partitioned(leaderOnly.partitions())));
    }

    private static Term partitionTerm(Method method, PartitionedElection election) {
        Term term = election.boundTerm().orElse(null);
        boolean ended = term != null && term.endReason().isPresent();
        if (term == null || ended || PartitionedLeaderOnly.running() != term) {
            throw new IllegalStateException(
                    "redlease: "
                            + method.getDeclaringClass().getSimpleName()
                            + "."
                            + method.getName()
                            + "() runs only inside the active term of a partition of '"
                            + election.name()
                            + "', and "
                            + (ended
                                    ? "the term of the partition run it was entered in has ended"
                                            + " (advice in front of it called it again after the"
                                            + " run was cut short)"
                                    : "the thread it was entered on works for no partition run"
                                            + " (advice in front of it called it on another"
                                            + " thread)")
                            + "; advice around a @LeaderOnly(partitions) method must call it on"
                            + " the calling thread, within the call");
        }
        return term;
    }
}
