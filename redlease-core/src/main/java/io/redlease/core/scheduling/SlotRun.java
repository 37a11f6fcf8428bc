package io.redlease.core.scheduling;

import io.redlease.core.Slot;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import io.redlease.core.TermEndedException;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.scheduling.SlotJobs.Result;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.util.context.Context;

/**
 * One run of a once-per-slot job's method for one slot, from its start inside the term to its mark.
 * While it runs it is bound to the thread, and the job's innermost advice ({@link Advice}) confirms
 * that the method itself was entered and returned on that thread: a run whose method returned
 * elsewhere, later or not at all (advice in front that hands the call to another thread, or answers
 * without calling it) is not marked.
 */
final class SlotRun {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    private static final ThreadLocal<@Nullable SlotRun> CURRENT = new ThreadLocal<>();

    private static final ThreadLocal<@Nullable Slot> PROPAGATED = new ThreadLocal<>();

    final SlotJob job;

    final Slot slot;

    private volatile boolean entered;

    private volatile boolean returned;

    /**
     * For a reactive method, whether its publisher completed; a blocking one completes on return.
     */
    private volatile boolean completed = true;

    SlotRun(SlotJob job, Slot slot) {
        this.job = job;
        this.slot = slot;
    }

    /**
     * Runs the slot inside the term and marks it, if the method returned on this thread while the
     * term was still active and the ledger accepts the mark.
     */
    Outcome execute(Term term, Progress at, SlotSchedule schedule) {
        try {
            return term.execute(() -> reported(term, at, schedule), job.interruptOnStepDown());
        } catch (TermEndedException ex) {
            if (ex.term() == term && ex.isBeforeStart()) {
                return Outcome.NOT_STARTED; // The term ended before the run could start.
            }
            if (ex.term() == term) {
                logger.warn(
                        "redlease: "
                                + job
                                + " slot "
                                + slot.time()
                                + " was cut short: its term (token "
                                + term.token()
                                + ") ended during the run; it is not marked");
                job.record(slot.time(), Result.FAILED);
                return Outcome.FAILED;
            }
            job.record(slot.time(), Result.FAILED);
            throw ex;
        } catch (Throwable ex) {
            logger.error("redlease: " + job + " failed slot " + slot.time(), ex);
            at.delayFrom = SlotJob.now(schedule);
            job.record(slot.time(), Result.FAILED);
            return Outcome.FAILED;
        }
    }

    /** Runs and marks the slot, reported to the run listeners around it. */
    private Outcome reported(Term term, Progress at, SlotSchedule schedule) throws Exception {
        LeaderOnlyRun run = job.runOf(term, slot);
        Object outcome =
                job.runs().run(run, term::isActive, () -> runAndMark(run, term, at, schedule));
        return (Outcome) Objects.requireNonNull(outcome);
    }

    private Outcome runAndMark(LeaderOnlyRun run, Term term, Progress at, SlotSchedule schedule)
            throws Exception {
        Instant time = slot.time();
        Publisher<?> publisher = schedule.publisher;
        schedule.running(Thread.currentThread());
        try {
            if (publisher == null) {
                invoke(schedule.task);
            } else {
                subscribe(publisher);
            }
        } finally {
            schedule.running(null);
        }
        Instant completedAt = SlotJob.now(schedule);
        at.delayFrom = completedAt;
        String failure;
        LeaderOnlyRun.Outcome reported = LeaderOnlyRun.Outcome.CUT_SHORT;
        if (!returned || !completed) {
            failure =
                    "returned without its method completing on the scheduler's thread (advice"
                            + " in front of it answered, or ran it elsewhere)";
        } else if (!term.isActive()) {
            failure = "was cut short: its term (token " + term.token() + ") ended during the run";
        } else if (schedule.isCancelled()) {
            failure = "was cut short: its schedule was cancelled during the run";
        } else {
            Instant start =
                    at.epoch != null
                            ? at.epoch
                            : schedule.trigger() instanceof SlotTrigger.FixedRate rate
                                    ? rate.epoch()
                                    : time;
            SlotLedger.Mark mark;
            try {
                mark = job.ledger().mark(term, time, completedAt, start);
            } catch (RuntimeException ex) {
                // The mark may have reached Redis: read the ledger again before the next run.
                job.forgetProgress();
                throw ex;
            }
            if (mark == SlotLedger.Mark.NOT_NEWER) {
                job.forgetProgress();
            }
            if (mark == SlotLedger.Mark.MARKED) {
                job.completed(at.completed(time, completedAt, start));
                job.record(time, slot.catchUp() ? Result.CAUGHT_UP : Result.RUN);
                return Outcome.COMPLETED;
            }
            failure = "completed, but its mark was refused (" + mark + ")";
            reported = LeaderOnlyRun.Outcome.REFUSED;
        }
        job.runs().settle(run, reported);
        logger.warn(
                "redlease: "
                        + job
                        + " slot "
                        + time
                        + " "
                        + failure
                        + "; it is not marked, and the leader runs it again as missedSlots says");
        job.record(time, Result.FAILED);
        return Outcome.FAILED;
    }

    /** Runs the method through Spring's task with this run bound to the thread. */
    private void invoke(Runnable method) {
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

    /**
     * Subscribes to a reactive method's publisher with this run bound to the thread (the method is
     * called at subscription) and the slot in the subscription's context, and waits for it to
     * complete: a run completes only when its publisher does.
     */
    private void subscribe(Publisher<?> publisher) throws Exception {
        CompletableFuture<@Nullable Void> done = new CompletableFuture<>();
        Disposable subscription;
        SlotRun outer = CURRENT.get();
        CURRENT.set(this);
        try {
            subscription =
                    Flux.from(publisher)
                            .contextWrite(Context.of(SlotAccessor.KEY, slot))
                            .subscribe(
                                    value -> {},
                                    done::completeExceptionally,
                                    () -> done.complete(null));
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
        try {
            done.get();
        } catch (InterruptedException ex) {
            subscription.dispose();
            throw ex;
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw ex;
        }
        if (!done.isCompletedExceptionally()) {
            completed = true;
        }
    }

    /** Returns the slot of the run whose method the calling thread is in, if any. */
    static @Nullable Slot current() {
        SlotRun run = CURRENT.get();
        return run != null && run.entered && !run.returned ? run.slot : PROPAGATED.get();
    }

    /** Returns the slot a thread carries for work a run started elsewhere, if any. */
    static @Nullable Slot propagated() {
        return PROPAGATED.get();
    }

    /** Makes {@code slot} the one the thread carries for work a run started elsewhere. */
    static void propagate(@Nullable Slot slot) {
        if (slot == null) {
            PROPAGATED.remove();
        } else {
            PROPAGATED.set(slot);
        }
    }

    /** How a run ended. */
    enum Outcome {
        /** The method returned inside the term and the slot is marked. */
        COMPLETED,
        /** The slot is not marked: the run threw, was cut short, or its mark was refused. */
        FAILED,
        /** The term ended before the run could start. */
        NOT_STARTED,
        /** Not run: the job is paused; the slot is settled. */
        PAUSED,
        /** Not run: the slot came due before the job's last resume; it is settled. */
        SETTLED
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
            if (run != null && run.job.runs(target, method)) {
                // The run's call, or a retry of it by advice in front (it returns once it did).
                run.entered = true;
                Object result = invocation.proceed();
                run.returned = true;
                return result;
            }
            SlotJob job = jobs.find(target, method);
            if (job != null && job.runs(target, method)) {
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
