package io.redlease.core;

/** The calling thread's stack, for tests that act at a chosen frame of the engine. */
final class Stacks {

    private Stacks() {}

    /** Returns whether a method of the given class is on the calling thread's stack. */
    static boolean onStack(Class<?> type, String method) {
        return StackWalker.getInstance()
                .walk(
                        frames ->
                                frames.anyMatch(
                                        frame ->
                                                frame.getClassName().equals(type.getName())
                                                        && frame.getMethodName().equals(method)));
    }
}
