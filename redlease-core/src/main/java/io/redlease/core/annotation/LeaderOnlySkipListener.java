package io.redlease.core.annotation;

import java.lang.reflect.Method;

/**
 * Hears of each {@link LeaderOnly} call that was skipped ({@link LeaderOnly.WhenNotLeader#SKIP})
 * because this instance did not lead: so that a follower's (or a not yet elected leader's) runs
 * that did nothing can be logged and counted. A rejected call ({@code REJECT}) is not reported: it
 * throws to its caller.
 *
 * <p>{@link LeaderOnlyAnnotationBeanPostProcessor} notifies every bean of this type in its bean
 * factory, found once all singletons exist (calls skipped while the context is still starting, when
 * no election has started yet, are not reported). Listeners are called on the thread that made the
 * call (for a reactive method, the subscribing thread), one after another; one that throws is
 * logged at WARN and does not affect the call or the other listeners. Keep them fast: a follower
 * skips every call.
 *
 * <p>A once-per-slot job's scheduled run on a follower does not reach the method: it is counted
 * among its slots, not here.
 */
@FunctionalInterface
public interface LeaderOnlySkipListener {

    /**
     * Called after a call was skipped.
     *
     * @param method the method that was called
     * @param reason why the call was skipped
     */
    void onSkipped(MethodRef method, Reason reason);

    /**
     * Called once for each {@code @LeaderOnly} method of each singleton bean, after all singletons
     * exist and before any of their calls is reported: so that a listener can, say, register a
     * counter at zero. The default does nothing.
     *
     * @param method the method
     */
    default void onAdvised(MethodRef method) {}

    /**
     * A {@code @LeaderOnly} method of a bean class.
     *
     * @param election the name of the election (the partitioned election's, for a method that runs
     *     per partition) the method runs in
     * @param targetClass the bean's class
     * @param method the method
     */
    record MethodRef(String election, Class<?> targetClass, Method method) {

        /** Returns the method as {@code SimpleClassName.method}, the same for every overload. */
        public String name() {
            return targetClass.getSimpleName() + "." + method.getName();
        }
    }

    /** Why a call was skipped. */
    enum Reason {
        /**
         * This instance did not hold a term of the election (it follows, or is not elected yet).
         */
        NOT_LEADER,
        /**
         * The term the call would have run in had ended: the term of the work it was called from,
         * or the instance's own term, which ended just before the call.
         */
        TERM_ENDED,
        /** The call runs once per owned partition, and this instance owned none. */
        NO_PARTITION
    }
}
