package io.redlease.core.scheduling;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Function;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.Advisor;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.interceptor.AsyncExecutionInterceptor;
import org.springframework.aop.support.AopUtils;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.support.CronTrigger;
import org.springframework.scheduling.support.ScheduledMethodRunnable;

/**
 * The scheduler Spring's {@code @Scheduled} processing sees once {@link SlotJobs} has configured
 * it: tasks of once-per-slot methods become {@link SlotSchedule}s on the scheduler it wraps; every
 * other task goes to that scheduler as it is.
 */
final class SlotTaskScheduler implements TaskScheduler {

    private final TaskScheduler scheduler;

    private final SlotJobs jobs;

    SlotTaskScheduler(TaskScheduler scheduler, SlotJobs jobs) {
        this.scheduler = scheduler;
        this.jobs = jobs;
    }

    @Override
    public Clock getClock() {
        return scheduler.getClock();
    }

    @Override
    public @Nullable ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
        SlotJob job = jobs.jobFor(task);
        if (job == null) {
            return scheduler.schedule(task, trigger);
        }
        if (!(trigger instanceof CronTrigger)) {
            throw refused(job, "is scheduled with a trigger other than @Scheduled's: " + trigger);
        }
        return start(job, task, clock -> new SlotTrigger.Cron(trigger, clock));
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
        SlotJob job = jobs.jobFor(task);
        if (job != null) {
            throw refused(job, "is scheduled to run once; it needs cron, fixedRate or fixedDelay");
        }
        return scheduler.schedule(task, startTime);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
            Runnable task, Instant startTime, Duration period) {
        SlotJob job = jobs.jobFor(task);
        if (job == null) {
            return scheduler.scheduleAtFixedRate(task, startTime, period);
        }
        checkPeriod(job, "fixedRate", period);
        return start(job, task, clock -> new SlotTrigger.FixedRate(period, startTime));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
        SlotJob job = jobs.jobFor(task);
        if (job == null) {
            return scheduler.scheduleAtFixedRate(task, period);
        }
        return scheduleAtFixedRate(task, scheduler.getClock().instant(), period);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(
            Runnable task, Instant startTime, Duration delay) {
        SlotJob job = jobs.jobFor(task);
        if (job == null) {
            return scheduler.scheduleWithFixedDelay(task, startTime, delay);
        }
        checkPeriod(job, "fixedDelay", delay);
        return start(job, task, clock -> new SlotTrigger.FixedDelay(delay, startTime));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
        SlotJob job = jobs.jobFor(task);
        if (job == null) {
            return scheduler.scheduleWithFixedDelay(task, delay);
        }
        return scheduleWithFixedDelay(task, scheduler.getClock().instant(), delay);
    }

    private ScheduledFuture<?> start(
            SlotJob job, Runnable task, Function<Clock, SlotTrigger> trigger) {
        ScheduledMethodRunnable method = ScheduledMethods.of(task);
        if (method != null) {
            checkNotAsync(job, method);
        }
        job.adviseInnermost();
        Publisher<?> publisher = method == null ? ScheduledMethods.publisherOf(task) : null;
        if (job.isPartitioned()) {
            return PartitionSlotJobs.start(
                    job,
                    jobs.partitioned(job.partitions()),
                    part -> new SlotSchedule(part, scheduler, task, publisher, trigger));
        }
        return job.start(new SlotSchedule(job, scheduler, task, publisher, trigger));
    }

    /**
     * Refuses a method that asynchronous advice applies to, whatever annotation selects it: its
     * call would return before the method ran.
     */
    private static void checkNotAsync(SlotJob job, ScheduledMethodRunnable method) {
        if (!(method.getTarget() instanceof Advised advised)) {
            return;
        }
        Class<?> targetClass = AopUtils.getTargetClass(method.getTarget());
        for (Advisor advisor : advised.getAdvisors()) {
            Advice advice = advisor.getAdvice();
            if (advice instanceof AsyncExecutionInterceptor
                    && (!(advisor instanceof PointcutAdvisor pointcut)
                            || AopUtils.canApply(pointcut.getPointcut(), targetClass)
                                    && pointcut.getPointcut()
                                            .getMethodMatcher()
                                            .matches(method.getMethod(), targetClass))) {
                throw refused(
                        job,
                        "runs through asynchronous advice ("
                                + advisor
                                + "), so a run would end before the method does; a once-per-slot"
                                + " method must run on the scheduler's thread");
            }
        }
    }

    private static void checkPeriod(SlotJob job, String attribute, Duration period) {
        if (period.toMillis() < 1 || period.toNanos() % 1_000_000 != 0) {
            throw refused(
                    job,
                    "has "
                            + attribute
                            + " "
                            + period
                            + "; slots are kept to the millisecond, so it must be a whole number of"
                            + " milliseconds, at least 1");
        }
    }

    private static IllegalStateException refused(SlotJob job, String reason) {
        return new IllegalStateException("redlease: once-per-slot job " + job.id + " " + reason);
    }

    @Override
    public String toString() {
        return "SlotTaskScheduler[" + scheduler + "]";
    }
}
