package io.redlease.core.scheduling;

import io.redlease.core.Slot;
import java.lang.reflect.Method;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

/**
 * One scheduled run of a once-per-slot job's method, bound to the thread that runs it. The job's
 * innermost advice ({@link Advice}) confirms that the method itself was entered and returned on
 * that thread: a run whose method returned elsewhere, later or not at all (advice in front that
 * hands the call to another thread, or answers without calling it) is not marked.
 */
final class SlotRun {

    private static final ThreadLocal<@Nullable SlotRun> CURRENT = new ThreadLocal<>();

    final SlotJob job;

    final Slot slot;

    private volatile boolean entered;

    private volatile boolean returned;

    SlotRun(SlotJob job, Slot slot) {
        this.job = job;
        this.slot = slot;
    }

    /** Runs the method through Spring's runnable with this run bound to the thread. */
    void invoke(Runnable method) {
        SlotRun outer = CURRENT.get();
        CURRENT.set(this);
        try {
            method.run();
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
    }

    /** Returns whether the method returned normally on this run's thread. */
    boolean returned() {
        return returned;
    }

    /** Returns the slot of the run whose method the calling thread is in, if any. */
    static @Nullable Slot current() {
        SlotRun run = CURRENT.get();
        return run != null && run.entered && !run.returned ? run.slot : null;
    }

    /**
     * The innermost advice on a once-per-slot method. A call made by the job's own run enters the
     * run; any other call is refused, so that the method never runs outside a slot.
     */
    static final class Advice implements MethodInterceptor {

        private final SlotJobs jobs;

        Advice(SlotJobs jobs) {
            this.jobs = jobs;
        }

        @Override
        public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
            Method method = invocation.getMethod();
            Object target = invocation.getThis();
            SlotRun run = CURRENT.get();
            if (run != null && !run.entered && run.job.runs(target, method)) {
                run.entered = true;
                Object result = invocation.proceed();
                run.returned = true;
                return result;
            }
            SlotJob job = jobs.find(target, method);
            if (job != null) {
                throw new IllegalStateException(
                        "redlease: "
                                + job
                                + " runs only as one of its slots, when its schedule runs it; it"
                                + " was called directly, or Spring scheduled it without redlease"
                                + " (a SchedulingConfigurer that replaced the scheduler after"
                                + " redlease's, or a task it could not recognise). Move the work"
                                + " into another method to call it outside the schedule");
            }
            return invocation.proceed();
        }
    }
}
