package io.redlease.core.annotation;

import io.redlease.core.Elector;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import java.lang.reflect.Method;
import java.util.concurrent.CompletionStage;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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
            Elector elector) {
        Method method = invocation.getMethod();
        Flux<Object> decided =
                Flux.defer(
                        () -> {
                            Term term = elector.term().filter(Term::isActive).orElse(null);
                            if (term == null) {
                                return leaderOnly.whenNotLeader() == WhenNotLeader.REJECT
                                        ? Flux.error(
                                                LeaderOnlyInterceptor.notLeaderException(
                                                        method, elector))
                                        : Flux.empty();
                            }
                            return term.executeReactive(
                                    () -> publisher(invocation, adapter),
                                    leaderOnly.interruptOnStepDown());
                        });
        return adapter.fromPublisher(decided);
    }

    /** Calls the method once more for this subscription, and returns its publisher. */
    @SuppressWarnings("unchecked")
    private static Publisher<Object> publisher(
            MethodInvocation invocation, ReactiveAdapter adapter) {
        MethodInvocation call =
                invocation instanceof ProxyMethodInvocation proxied
                        ? proxied.invocableClone()
                        : invocation;
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
