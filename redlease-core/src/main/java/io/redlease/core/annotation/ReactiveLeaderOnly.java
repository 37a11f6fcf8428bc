package io.redlease.core.annotation;

import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.core.TermEndedException;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.annotation.LeaderOnlySkipListener.Reason;
import java.lang.reflect.Method;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * {@code @LeaderOnly} on a method that returns a publisher (or a Kotlin {@code suspend} function,
 * which Spring's proxies call as a {@code Mono}): the call returns at once a publisher of the same
 * type that decides at each subscription. A leader's subscription calls the method inside its term
 * ({@link Term#executeReactive}): the term is in the subscription's context throughout, and its end
 * cancels the subscription unless {@code interruptOnStepDown} is false. A follower's subscription
 * completes empty ({@code SKIP}) or fails with a {@link io.redlease.core.NotLeaderException}
 * ({@code REJECT}), and the method is not called.
 */
final class ReactiveLeaderOnly {

    private static final ReactiveAdapterRegistry REGISTRY =
            ReactiveAdapterRegistry.getSharedInstance();

    private ReactiveLeaderOnly() {}

    /** Returns the adapter of a reactive method's return type, or null for other methods. */
    static @Nullable ReactiveAdapter adapter(Method method) {
        if (KotlinDetector.isKotlinPresent() && KotlinDetector.isSuspendingFunction(method)) {
            return REGISTRY.getAdapter(Mono.class);
        }
        Class<?> type = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(type)) {
            return null;
        }
        ReactiveAdapter adapter = REGISTRY.getAdapter(type);
        return adapter != null && adapter.getDescriptor().isDeferred() ? adapter : null;
    }

    static Object invoke(
            MethodInvocation invocation,
            ReactiveAdapter adapter,
            LeaderOnly leaderOnly,
            Elector elector,
            Consumer<Reason> skipped) {
        Method method = invocation.getMethod();
        Flux<Object> decided =
                Flux.deferContextual(
                        context -> {
                            Term term = termAt(elector, context);
                            if (term == null || !term.isActive()) {
                                return notLeader(
                                        method,
                                        leaderOnly,
                                        elector,
                                        skipped,
                                        term == null ? Reason.NOT_LEADER : Reason.TERM_ENDED);
                            }
                            return term.executeReactive(
                                            () -> publisher(invocation, adapter),
                                            leaderOnly.interruptOnStepDown())
                                    .onErrorResume(
                                            TermEndedException.class,
                                            ex ->
                                                    ex.term() == term && ex.isBeforeStart()
                                                            ? notLeader(
                                                                    method,
                                                                    leaderOnly,
                                                                    elector,
                                                                    skipped,
                                                                    Reason.TERM_ENDED)
                                                            : Flux.error(ex));
                        });
        return adapter.fromPublisher(decided);
    }

    /**
     * Returns the term a subscription runs in: the one its context or its thread carries, even if
     * it has ended (work of an ended term starts no leader-only work), else the current one.
     */
    private static @Nullable Term termAt(Elector elector, ContextView context) {
        Term carried = elector.termIn(context).orElse(null);
        return carried != null ? carried : LeaderOnlyInterceptor.termOf(elector);
    }

    private static Flux<Object> notLeader(
            Method method,
            LeaderOnly leaderOnly,
            Elector elector,
            Consumer<Reason> skipped,
            Reason reason) {
        if (leaderOnly.whenNotLeader() == WhenNotLeader.REJECT) {
            return Flux.error(LeaderOnlyInterceptor.notLeaderException(method, elector));
        }
        skipped.accept(reason);
        return Flux.empty();
    }

    /** Calls the method once more for this subscription, and returns its publisher. */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> publisher(
            MethodInvocation invocation, ReactiveAdapter adapter) {
        MethodInvocation call = invocation;
        if (invocation instanceof ProxyMethodInvocation proxied) {
            ProxyMethodInvocation clone = (ProxyMethodInvocation) proxied.invocableClone();
            if (KotlinDetector.isKotlinPresent()
                    && KotlinDetector.isSuspendingFunction(invocation.getMethod())) {
                SuspendingCalls.propagateContext(clone);
            }
            call = clone;
        }
        Object result;
        try {
            result = call.proceed();
        } catch (RuntimeException | Error ex) {
            throw ex;
        } catch (Throwable ex) {
            return Flux.error(ex);
        }
        if (result == null) {
            return Flux.empty();
        }
        return result instanceof Publisher<?> publisher
                ? (Publisher<Object>) publisher
                : (Publisher<Object>) adapter.toPublisher(result);
    }
}
