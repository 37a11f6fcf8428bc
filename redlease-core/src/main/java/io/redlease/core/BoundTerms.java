package io.redlease.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The terms whose work the current thread is doing, innermost first.
 *
 * <p>A call bound with {@code interrupt} registers its thread with the term, which interrupts it
 * when the term ends. Only the outermost call on a thread clears such an interrupt when it returns:
 * an inner call leaves it set, so the code around it sees it too (an outer term may have ended in
 * the same moment, and the outer code must learn that its own work was cut short).
 *
 * <p>Work that continues on other threads carries its terms along: a {@link #snapshot()} taken
 * where the work starts is {@linkplain #carry carried} by the thread that continues it (by
 * Micrometer context propagation, {@link BoundTermAccessor}), and a reactive subscription holds
 * them in its Reactor {@code Context} under {@link #KEY}. Carried terms are a scope of their own,
 * the innermost one: inside it the thread answers for those terms only, whether or not they are
 * still active, so that work that outlives its term writes with that term's token and is refused,
 * even on a thread that is doing another term's work around it.
 */
final class BoundTerms {

    private static final ThreadLocal<@Nullable Frames> frames = new ThreadLocal<>();

    /** The key of the carried terms in a Reactor {@code Context} and in context propagation. */
    static final String KEY = "io.redlease.terms";

    private BoundTerms() {}

    /**
     * Binds a term to the current thread.
     *
     * @param interrupt whether the term's end interrupts the thread
     * @return the frame to pass to {@link #unbind}, or null when the term has already ended
     */
    static @Nullable Frame bind(Term term, boolean interrupt) {
        Thread thread = Thread.currentThread();
        if (interrupt ? !term.bind(thread) : !term.isActive()) {
            return null;
        }
        Frame frame = new Frame(term, interrupt);
        stack().push(frame);
        return frame;
    }

    /** Unbinds the innermost frame; the outermost one clears an interrupt a term's end caused. */
    static void unbind(Frame frame) {
        Frames stack = frames.get();
        if (stack == null || stack.peek() != frame) {
            throw new IllegalStateException("redlease: term frames unbound out of order");
        }
        stack.pop();
        if (frame.interrupt && frame.term != null && frame.term.unbind(Thread.currentThread())) {
            stack.interruptedByTermEnd = true;
        }
        if (stack.isEmpty()) {
            frames.remove();
            if (stack.interruptedByTermEnd) {
                // Do not leak the term's interrupt to the caller's thread (often pooled).
                Thread.interrupted();
            }
        }
    }

    /**
     * Runs work of a term the thread already works for further out, with that term innermost again
     * for the duration, so that {@link LeadershipContext} answers for it (not for a term of another
     * election bound in between). The frame registers no interrupt: the outer binding keeps its
     * own.
     */
    static <T> T reenter(Term term, Callable<T> work) throws Exception {
        if (innermost() == term) {
            return work.call();
        }
        Frame frame = new Frame(term, false);
        stack().push(frame);
        try {
            return work.call();
        } finally {
            unbind(frame);
        }
    }

    /** Returns whether the term is the innermost one of its elector that the thread works for. */
    static boolean isBound(Term term) {
        return of(term.elector()) == term;
    }

    /** Returns the innermost term of the elector the thread works for, if any. */
    static @Nullable Term of(Elector elector) {
        Frames stack = frames.get();
        if (stack != null) {
            for (Frame frame : stack) {
                if (frame.term != null) {
                    if (frame.term.elector() == elector) {
                        return frame.term;
                    }
                } else {
                    // Carried terms are the whole answer of their scope.
                    return find(frame.carried, elector);
                }
            }
        }
        return null;
    }

    /**
     * Returns the innermost term the thread works for (the first of the terms it carries, in a
     * carried scope), or null if none.
     */
    static @Nullable Term innermost() {
        Frames stack = frames.get();
        Frame top = stack == null ? null : stack.peek();
        if (top == null) {
            return null;
        }
        return top.term != null ? top.term : top.carried.isEmpty() ? null : top.carried.get(0);
    }

    /** Returns every term the thread works for, innermost first, or null if none. */
    static @Nullable List<Term> snapshot() {
        Frames stack = frames.get();
        if (stack == null) {
            return null;
        }
        List<Term> terms = new ArrayList<>();
        for (Frame frame : stack) {
            if (frame.term != null) {
                terms.add(frame.term);
            } else {
                terms.addAll(frame.carried);
                break;
            }
        }
        return terms.isEmpty() ? null : List.copyOf(terms);
    }

    /**
     * Opens a scope in which the thread carries {@code terms} (a {@link #snapshot()} taken where
     * the work started; empty carries none) for work started elsewhere; {@link #endCarry()} closes
     * it.
     */
    static void carry(List<Term> terms) {
        Frame frame = new Frame(List.copyOf(terms));
        stack().push(frame);
    }

    /** Closes the innermost scope {@link #carry} opened. */
    static void endCarry() {
        Frames stack = frames.get();
        Frame top = stack == null ? null : stack.peek();
        if (top == null || top.term != null) {
            throw new IllegalStateException("redlease: carried terms restored out of order");
        }
        unbind(top);
    }

    /** Returns the Reactor context with {@code term} innermost among the terms it carries. */
    static Context inContext(Context context, Term term) {
        List<Term> outer = context.getOrDefault(KEY, List.of());
        List<Term> terms = new ArrayList<>(outer.size() + 1);
        terms.add(term);
        terms.addAll(outer);
        return context.put(KEY, List.copyOf(terms));
    }

    /** Returns the innermost term of the elector that a Reactor context carries, if any. */
    static @Nullable Term of(Elector elector, ContextView context) {
        return find(context.getOrDefault(KEY, List.of()), elector);
    }

    private static @Nullable Term find(List<Term> terms, Elector elector) {
        for (Term term : terms) {
            if (term.elector() == elector) {
                return term;
            }
        }
        return null;
    }

    private static Frames stack() {
        Frames stack = frames.get();
        if (stack == null) {
            stack = new Frames();
            frames.set(stack);
        }
        return stack;
    }

    /** One binding of the thread: a term it works for, or the terms it carries. */
    static final class Frame {

        final @Nullable Term term;

        final boolean interrupt;

        final List<Term> carried;

        Frame(Term term, boolean interrupt) {
            this.term = term;
            this.interrupt = interrupt;
            this.carried = List.of();
        }

        Frame(List<Term> carried) {
            this.term = null;
            this.interrupt = false;
            this.carried = carried;
        }
    }

    private static final class Frames extends ArrayDeque<Frame> {

        private static final long serialVersionUID = 1L;

        /** Whether a term bound in this stack ended and interrupted the thread. */
        boolean interruptedByTermEnd;
    }
}
