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

    /** Opens a scope in which the thread carries the terms, inside whatever it does already. */
    @Override
    public void setValue(List<Term> terms) {
        BoundTerms.carry(terms);
    }

    /** Opens a scope in which the thread carries no term: the work it runs has none. */
    @Override
    public void setValue() {
        BoundTerms.carry(List.of());
    }

    /** Closes the scope the last {@code setValue} opened. */
    @Override
    public void restore(List<Term> previous) {
        BoundTerms.endCarry();
    }

    /** Closes the scope the last {@code setValue} opened. */
    @Override
    public void restore() {
        BoundTerms.endCarry();
    }
}
