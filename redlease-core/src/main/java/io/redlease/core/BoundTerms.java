package io.redlease.core;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import org.jspecify.annotations.Nullable;

/** The terms whose work the current thread is doing, innermost last. */
final class BoundTerms {

    private static final ThreadLocal<Deque<Term>> terms = ThreadLocal.withInitial(ArrayDeque::new);

    private BoundTerms() {}

    static void push(Term term) {
        terms.get().push(term);
    }

    static void pop() {
        Deque<Term> stack = terms.get();
        stack.pop();
        if (stack.isEmpty()) {
            terms.remove();
        }
    }

    /** Returns the innermost term of the elector bound to this thread, if any. */
    static @Nullable Term of(Elector elector) {
        for (Iterator<Term> it = terms.get().iterator(); it.hasNext(); ) {
            Term term = it.next();
            if (term.elector() == elector) {
                return term;
            }
        }
        return null;
    }
}
