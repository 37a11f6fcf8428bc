package io.redlease.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;

/**
 * The terms whose work the current thread is doing, innermost first.
 *
 * <p>A call bound with {@code interrupt} registers its thread with the term, which interrupts it
 * when the term ends. Only the outermost call on a thread clears such an interrupt when it returns:
 * an inner call leaves it set, so the code around it sees it too (an outer term may have ended in
 * the same moment, and the outer code must learn that its own work was cut short).
 *
 * <p>Work that continues on other threads carries its terms along: a {@link #snapshot()} taken
 * where the work starts is set as the {@linkplain #restore propagated} terms of the thread that
 * continues it (by Micrometer context propagation, {@link BoundTermAccessor}), and a reactive
 * subscription holds them in its Reactor {@code Context} under {@link #KEY}. Propagated terms are
 * found after the thread's own, whether or not they are still active, so that work that outlives
 * its term writes with that term's token and is refused.
 */
final class BoundTerms {

    private static final ThreadLocal<@Nullable Frames> frames = new ThreadLocal<>();

    private static final ThreadLocal<@Nullable List<Term>> propagated = new ThreadLocal<>();

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
        Frames stack = frames.get();
        if (stack == null) {
            stack = new Frames();
            frames.set(stack);
        }
        Frame frame = new Frame(term, interrupt);
        stack.push(frame);
        return frame;
    }

    /** Unbinds the innermost frame; the outermost one clears an interrupt a term's end caused. */
    static void unbind(Frame frame) {
        Frames stack = frames.get();
        if (stack == null || stack.peek() != frame) {
            throw new IllegalStateException("redlease: term frames unbound out of order");
        }
        stack.pop();
        if (frame.interrupt && frame.term.unbind(Thread.currentThread())) {
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

    /** Returns whether the term is bound to the current thread. */
    static boolean isBound(Term term) {
        Frames stack = frames.get();
        if (stack != null) {
            for (Frame frame : stack) {
                if (frame.term == term) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Returns the innermost term of the elector bound to this thread, if any. */
    static @Nullable Term of(Elector elector) {
        Frames stack = frames.get();
        if (stack != null) {
            for (Frame frame : stack) {
                if (frame.term.elector() == elector) {
                    return frame.term;
                }
            }
        }
        List<Term> carried = propagated.get();
        if (carried != null) {
            for (Term term : carried) {
                if (term.elector() == elector) {
                    return term;
                }
            }
        }
        return null;
    }

    /** Returns every term the current thread works for, innermost first, or null if none. */
    static @Nullable List<Term> snapshot() {
        Frames stack = frames.get();
        List<Term> carried = propagated.get();
        if (stack == null && carried == null) {
            return null;
        }
        List<Term> terms = new ArrayList<>();
        if (stack != null) {
            for (Frame frame : stack) {
                terms.add(frame.term);
            }
        }
        if (carried != null) {
            terms.addAll(carried);
        }
        return List.copyOf(terms);
    }

    /**
     * Makes {@code terms} (a {@link #snapshot()}) the terms the current thread carries for work
     * started elsewhere; null carries none. Terms the thread has bound itself are left to it.
     */
    static void restore(@Nullable List<Term> terms) {
        if (terms == null || terms.isEmpty()) {
            propagated.remove();
            return;
        }
        Frames stack = frames.get();
        List<Term> carried = new ArrayList<>(terms);
        if (stack != null) {
            for (Frame frame : stack) {
                carried.remove(frame.term);
            }
        }
        if (carried.isEmpty()) {
            propagated.remove();
        } else {
            propagated.set(List.copyOf(carried));
        }
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
    static @Nullable Term of(Elector elector, reactor.util.context.ContextView context) {
        List<Term> carried = context.getOrDefault(KEY, List.of());
        for (Term term : carried) {
            if (term.elector() == elector) {
                return term;
            }
        }
        return null;
    }

    /** One binding of a term to the thread. */
    static final class Frame {

        final Term term;

        final boolean interrupt;

        Frame(Term term, boolean interrupt) {
            this.term = term;
            this.interrupt = interrupt;
        }
    }

    private static final class Frames extends ArrayDeque<Frame> {

        private static final long serialVersionUID = 1L;

        /** Whether a term bound in this stack ended and interrupted the thread. */
        boolean interruptedByTermEnd;
    }
}
