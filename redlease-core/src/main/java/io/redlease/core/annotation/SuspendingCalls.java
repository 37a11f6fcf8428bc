package io.redlease.core.annotation;

import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.PropagationContextElement;
import org.springframework.util.ClassUtils;

/**
 * A {@code @LeaderOnly} Kotlin {@code suspend} function's call: Spring runs it in a coroutine of
 * the caller's coroutine context. Unless that context propagates thread-local state already, this
 * adds Spring's {@link PropagationContextElement}, captured while the term is bound: the function's
 * body then sees its term in thread-local state at every resumption, from the subscription's
 * Reactor context, so that {@code LeadershipContext} answers for that term there too. Loaded only
 * for suspend functions, so only where Kotlin is present.
 */
final class SuspendingCalls {

    private static final boolean PROPAGATION =
            ClassUtils.isPresent(
                    "io.micrometer.context.ContextRegistry",
                    SuspendingCalls.class.getClassLoader());

    private SuspendingCalls() {}

    /** Makes the call's coroutine propagate thread-local state, if it does not already. */
    @SuppressWarnings("unchecked")
    static void propagateContext(ProxyMethodInvocation invocation) {
        Object[] arguments = invocation.getArguments();
        int last = arguments.length - 1;
        if (!PROPAGATION || last < 0 || !(arguments[last] instanceof Continuation<?> caller)) {
            return;
        }
        CoroutineContext context = caller.getContext();
        if (context.get(PropagationContextElement.Key) != null) {
            return;
        }
        CoroutineContext propagating = context.plus(new PropagationContextElement());
        Continuation<Object> resumed = (Continuation<Object>) caller;
        arguments[last] =
                new Continuation<Object>() {
                    @Override
                    public CoroutineContext getContext() {
                        return propagating;
                    }

                    @Override
                    public void resumeWith(@Nullable Object result) {
                        resumed.resumeWith(result);
                    }
                };
        invocation.setArguments(arguments);
    }
}
