package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.NotLeaderException;
import io.redlease.core.Term;
import io.redlease.core.TermEndedException;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.annotation.LeaderOnlyRun.Outcome;
import io.redlease.core.annotation.LeaderOnlySkipListener.MethodRef;
import io.redlease.core.annotation.LeaderOnlySkipListener.Reason;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Runs a {@link LeaderOnly} method inside the election's current term, or skips or rejects it when
 * this instance does not lead. A once-per-slot job's scheduled run has its term bound already, so
 * its call runs inside that term like any nested call; called directly, such a method is an
 * ordinary {@code @LeaderOnly} call, outside any slot. Each skipped call is reported to the {@link
 * LeaderOnlySkipListener}s.
 */
final class LeaderOnlyInterceptor implements MethodInterceptor {

    private final Supplier<Elections> elections;

    /** Hears of each publisher a once-per-slot reactive method returns. */
    private final PublisherListener publishers;

    /** Hears of each skipped call. */
    private final SkipReports skips;

    /** Hears of each call, around its run. */
    private final LeaderOnlyRuns runs;

    /**
     * Whether a bean with {@code @LeaderOnly} methods was proxied that the startup checks do not
     * see (created after them, or not a singleton): then each call checks its proxy's advice.
     */
    private volatile boolean lateBeans;

    /** How each method of each target class is called, worked out once. */
    private final Map<MethodClassKey, Optional<Plan>> plans = new ConcurrentHashMap<>();

    /**
     * Creates the interceptor.
     *
     * @param elections supplies the application's elections, looked up at the first call
     * @param publishers hears of each publisher a once-per-slot reactive method returns
     * @param skips hears of each skipped call
     * @param runs hears of each call, around its run
     */
    LeaderOnlyInterceptor(
            Supplier<Elections> elections,
            PublisherListener publishers,
            SkipReports skips,
            LeaderOnlyRuns runs) {
        this.elections = elections;
        this.publishers = publishers;
        this.skips = skips;
        this.runs = runs;
    }

    /**
     * Notes that a bean with {@code @LeaderOnly} methods was proxied that the startup checks do not
     * see: from now on each call checks its proxy's advice first.
     */
    void lateBean() {
        lateBeans = true;
    }

    /** Hears of the publisher a call of a once-per-slot reactive method returned. */
    @FunctionalInterface
    interface PublisherListener {

        void returned(@Nullable Object target, Method method, Object publisher);
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : null;
        Plan plan =
                plans.computeIfAbsent(
                                new MethodClassKey(method, targetClass),
                                key -> Optional.ofNullable(Plan.of(method, targetClass)))
                        .orElse(null);
        if (plan == null) {
            return invocation.proceed();
        }
        LeaderOnly leaderOnly = plan.leaderOnly();
        if (!leaderOnly.partitions().isEmpty() || lateBeans) {
            if (LeaderOnlyRunGuard.verify(invocation, method, targetClass, leaderOnly)
                    && invocation instanceof ProxyMethodInvocation proxied) {
                // The run's check moved innermost: call through the proxy's new chain.
                return AopUtils.invokeJoinpointUsingReflection(
                        proxied.getProxy(), method, invocation.getArguments());
            }
        }
        if (!leaderOnly.partitions().isEmpty()) {
            Elections all = elections.get();
            return PartitionedLeaderOnly.invoke(
                    invocation,
                    leaderOnly,
                    all.partitioned(leaderOnly.partitions()),
                    all,
                    (election, reason) -> skips.skipped(election, targetClass, method, reason),
                    new PartitionedLeaderOnly.Runs(runs, targetClass));
        }
        Elector elector = elections.get().get(leaderOnly.value());
        if (plan.reactive() != null) {
            Object publisher =
                    ReactiveLeaderOnly.invoke(
                            invocation,
                            plan.reactive(),
                            leaderOnly,
                            elector,
                            reason -> skips.skipped(elector.name(), targetClass, method, reason));
            if (leaderOnly.oncePerSlot()) {
                publishers.returned(target, method, publisher);
            }
            return publisher;
        }
        // A method returning a stage is not reported to the run listeners, run or not: its run
        // goes on after the call returns.
        LeaderOnlyRuns reported = plan.async() ? LeaderOnlyRuns.NONE : runs;
        Term term = termOf(elector);
        if (term == null || !term.isActive()) {
            // Not leading, or work of an ended term that may not start leader-only work.
            return notLeader(
                    method,
                    targetClass,
                    leaderOnly,
                    elector,
                    term == null ? Reason.NOT_LEADER : Reason.TERM_ENDED,
                    reported);
        }
        try {
            if (plan.async()) {
                return term.executeAsync(
                        new AsyncCall(invocation), leaderOnly.interruptOnStepDown());
            }
            LeaderOnlyRun outer = LeaderOnlyRun.current();
            if (outer != null
                    && outer.slot() != null
                    && outer.token() == term.token()
                    && outer.method().method().getName().equals(method.getName())
                    && outer.method().targetClass() == targetClassOf(targetClass, method)) {
                // The once-per-slot run's own call (or a retry of it): reported as that run.
                return term.execute(new Call(invocation), leaderOnly.interruptOnStepDown());
            }
            LeaderOnlyRun run =
                    new LeaderOnlyRun(
                            new MethodRef(
                                    elector.name(), targetClassOf(targetClass, method), method),
                            null,
                            term.token(),
                            SlotJobs.current().orElse(null),
                            elector.instanceId());
            Call call = new Call(invocation);
            return term.execute(
                    new Named<>(() -> runs.run(run, term::isActive, call), call),
                    leaderOnly.interruptOnStepDown());
        } catch (TermEndedException ex) {
            if (ex.term() == term && ex.isBeforeStart()) {
                // The term ended between the check and the call: the method did not run.
                return notLeader(
                        method, targetClass, leaderOnly, elector, Reason.TERM_ENDED, reported);
            }
            throw ex;
        } catch (UndeclaredThrowableException ex) {
            throw ex.getUndeclaredThrowable();
        }
    }

    /**
     * How a {@code @LeaderOnly} method is called.
     *
     * @param reactive the adapter of its reactive return type (a Kotlin {@code suspend} function is
     *     called as a {@code Mono}), or null
     * @param async whether it returns a {@link CompletionStage}, which the term stays in until it
     *     completes
     */
    record Plan(LeaderOnly leaderOnly, @Nullable ReactiveAdapter reactive, boolean async) {

        static @Nullable Plan of(Method method, @Nullable Class<?> targetClass) {
            LeaderOnly leaderOnly = find(method, targetClass);
            if (leaderOnly == null) {
                return null;
            }
            return new Plan(
                    leaderOnly,
                    ReactiveLeaderOnly.adapter(method),
                    CompletionStage.class.isAssignableFrom(method.getReturnType()));
        }
    }

    /** A call that returns a stage, named after its method in the WARN of a forced stop. */
    record AsyncCall(MethodInvocation invocation)
            implements Callable<@Nullable CompletionStage<Object>> {

        @Override
        @SuppressWarnings("unchecked")
        public @Nullable CompletionStage<Object> call() throws Exception {
            return (CompletionStage<Object>) new Call(invocation).call();
        }

        @Override
        public String toString() {
            return new Call(invocation).toString();
        }
    }

    /** Work named after the call it runs, in the WARN of a forced stop. */
    record Named<T>(Callable<T> work, Call named) implements Callable<T> {

        @Override
        public T call() throws Exception {
            return work.call();
        }

        @Override
        public String toString() {
            return named.toString();
        }
    }

    /** One intercepted call, named after its method in the WARN of a forced stop. */
    record Call(MethodInvocation invocation) implements Callable<@Nullable Object> {

        @Override
        public @Nullable Object call() throws Exception {
            try {
                return invocation.proceed();
            } catch (Exception | Error ex) {
                throw ex;
            } catch (Throwable ex) {
                throw new UndeclaredThrowableException(ex);
            }
        }

        @Override
        public String toString() {
            Method method = invocation.getMethod();
            return method.getDeclaringClass().getName() + "." + method.getName() + "()";
        }
    }

    private @Nullable Object notLeader(
            Method method,
            @Nullable Class<?> targetClass,
            LeaderOnly leaderOnly,
            Elector elector,
            Reason reason,
            LeaderOnlyRuns reports) {
        Class<?> type = method.getReturnType();
        LeaderOnlyRun call =
                new LeaderOnlyRun(
                        new MethodRef(elector.name(), targetClassOf(targetClass, method), method),
                        null,
                        0,
                        SlotJobs.current().orElse(null),
                        elector.instanceId());
        if (leaderOnly.whenNotLeader() == WhenNotLeader.REJECT
                || (type.isPrimitive() && type != void.class)) {
            reports.notRun(call, Outcome.REJECTED);
            throw notLeaderException(method, elector);
        }
        skips.skipped(elector.name(), targetClass, method, reason);
        reports.notRun(
                call,
                reason == Reason.NOT_LEADER
                        ? Outcome.SKIPPED_NOT_LEADER
                        : Outcome.SKIPPED_TERM_ENDED);
        return skippedResult(type);
    }

    static Class<?> targetClassOf(@Nullable Class<?> targetClass, Method method) {
        return targetClass != null ? targetClass : method.getDeclaringClass();
    }

    /**
     * Returns the term a call runs in: the one the calling thread works for, even if it has ended
     * (work of an ended term starts no leader-only work, also not in a newer term), else the
     * elector's current one.
     */
    static @Nullable Term termOf(Elector elector) {
        return elector.boundTerm().or(elector::term).orElse(null);
    }

    static NotLeaderException notLeaderException(Method method, Elector elector) {
        return new NotLeaderException(
                elector.name(),
                "redlease: "
                        + method.getDeclaringClass().getSimpleName()
                        + "."
                        + method.getName()
                        + " runs only on the leader of '"
                        + elector.name()
                        + "', and this instance does not lead it");
    }

    /** Returns what a skipped call of a method with this return type returns. */
    static @Nullable Object skippedResult(Class<?> type) {
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == CompletableFuture.class || type == CompletionStage.class) {
            return CompletableFuture.completedFuture(null);
        }
        return null;
    }

    /** Finds the annotation on the method, else on its class. */
    static @Nullable LeaderOnly find(Method method, @Nullable Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        LeaderOnly onMethod =
                AnnotatedElementUtils.findMergedAnnotation(specific, LeaderOnly.class);
        if (onMethod != null) {
            return onMethod;
        }
        Class<?> type = targetClass != null ? targetClass : method.getDeclaringClass();
        return AnnotatedElementUtils.findMergedAnnotation(type, LeaderOnly.class);
    }
}
