package io.redlease.core;

import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The terms whose work the current thread is doing, innermost first.
 *
 * <p>A call bound with {@code interrupt} registers its thread with the term, which interrupts it
 * when the term ends. Only the outermost call on a thread clears such an interrupt when it returns:
 * an inner call leaves it set, so the code around it sees it too (an outer term may have ended in
 * the same moment, and the outer code must learn that its own work was cut short).
 */
final class BoundTerms {

    private static final ThreadLocal<@Nullable Frames> frames = new ThreadLocal<>();

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
