package io.redlease.core;

import io.micrometer.context.ThreadLocalAccessor;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Carries the terms a thread works for to the threads that continue its work, through Micrometer
 * context propagation: Reactor operators under {@code Hooks.enableAutomaticContextPropagation()}
 * (Boot's {@code spring.reactor.context-propagation=auto}) and tasks decorated with Spring's {@code
 * ContextPropagatingTaskDecorator} (such as {@code @Async} methods). There, {@link
 * LeadershipContext} answers for the term the work was started in, even after it ended, so that
 * fenced writes of work that outlived its term are refused.
 *
 * <p>Registered with context propagation through {@code META-INF/services}.
 */
public final class BoundTermAccessor implements ThreadLocalAccessor<List<Term>> {

    @Override
    public Object key() {
        return BoundTerms.KEY;
    }

    @Override
    public @Nullable List<Term> getValue() {
        return BoundTerms.snapshot();
    }

    @Override
    public void setValue(List<Term> terms) {
        BoundTerms.restore(terms);
    }

    @Override
    public void setValue() {
        BoundTerms.restore(null);
    }
}
