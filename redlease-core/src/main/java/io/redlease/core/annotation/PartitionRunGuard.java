package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.Term;
import io.redlease.core.partition.PartitionedElection;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;

/**
 * The innermost advice on a {@code @LeaderOnly(partitions = ...)} method: the method itself runs
 * only on the thread making a run of an active term of a partition of its election (a term that
 * passed its deadline since the run was admitted refuses it, as a start past the deadline). {@link
 * PartitionedLeaderOnly} binds that term around each run; advice between the two that calls the
 * method on another thread (even one the term was propagated to) or again after the run's term
 * ended (a retry of a run that was cut short) is refused here, so the method never runs outside its
 * partition's run.
 */
final class PartitionRunGuard implements MethodInterceptor {

    private final Supplier<Elections> elections;

    PartitionRunGuard(Supplier<Elections> elections) {
        this.elections = elections;
    }

    /**
     * Checks, at each call of a partitioned method through its proxy, what the startup checks could
     * not see on a bean created after them (a lazy or prototype bean): refuses the call when
     * asynchronous advice applies to the method, and moves the guard innermost when advice that a
     * later post-processor added sits inside it.
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
        Advisor guard = null;
        boolean foreignInside = false;
        for (Advisor advisor : advisors) {
            if (advisor.getAdvice() instanceof PartitionRunGuard) {
                guard = advisor;
            } else if (guard != null && !isOwn(advisor)) {
                foreignInside = true;
            }
        }
        if (guard == null || !foreignInside) {
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
                            + " partition check (a bean created after startup); the check is now"
                            + " innermost, and this call did not run");
        }
        return true;
    }

    /** Returns whether the advisor is redlease's own innermost advice (a once-per-slot run's). */
    private static boolean isOwn(Advisor advisor) {
        return advisor.getAdvice().getClass().getName().startsWith("io.redlease.core.");
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        LeaderOnly leaderOnly =
                LeaderOnlyInterceptor.find(
                        method, target != null ? AopUtils.getTargetClass(target) : null);
        if (leaderOnly == null || leaderOnly.partitions().isEmpty()) {
            return invocation.proceed();
        }
        PartitionedElection election = elections.get().partitioned(leaderOnly.partitions());
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
        try {
            // A nested call of the run's term: refused before the method starts (a
            // TermEndedException, which the run takes as not started) when the term passed its
            // deadline since the run was admitted.
            return term.execute(new LeaderOnlyInterceptor.Call(invocation), false);
        } catch (UndeclaredThrowableException ex) {
            throw ex.getUndeclaredThrowable();
        }
    }
}
