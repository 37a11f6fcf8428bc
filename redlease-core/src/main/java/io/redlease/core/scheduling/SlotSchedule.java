package io.redlease.core.scheduling;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.task.TaskRejectedException;
import org.springframework.scheduling.SchedulingAwareRunnable;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.TriggerContext;

/**
 * How one once-per-slot job is scheduled on this instance, in place of the task Spring would have
 * scheduled for its method: a chain of one-shot links on the scheduler Spring chose, each for one
 * slot. Each link runs once, then its job says which slot the next link is for.
 *
 * <p>A link is scheduled as a trigger task that fires once, so that the scheduler that runs it
 * (Spring's router picks it by the method's {@code @Scheduled(scheduler)} qualifier) hands it its
 * own clock. Spring keeps this object as the method's future: cancelling it ends the chain.
 */
final class SlotSchedule implements ScheduledFuture<Object> {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    private final SlotJob job;

    private final TaskScheduler scheduler;

    /**
     * Spring's task for the method: calls it through its proxy, observed, outcome tracked. For a
     * reactive method a run subscribes to {@link #publisher} instead.
     */
    final Runnable task;

    /** The publisher a reactive method returned when Spring scheduled it, or null. */
    final @Nullable Publisher<?> publisher;

    /**
     * The {@code @Scheduled(scheduler)} qualifier, which routes the links as it routes the task.
     */
    private final @Nullable String qualifier;

    private final Function<Clock, SlotTrigger> triggerOnClock;

    private volatile @Nullable Clock clock;

    private volatile @Nullable SlotTrigger trigger;

    private final CompletableFuture<Object> ended = new CompletableFuture<>();

    // Guarded by this.
    private @Nullable ScheduledFuture<?> pending;

    private long generation;

    /**
     * The operators' run-now calls waiting for the scheduler; cancelling the chain refuses them (a
     * call already running answers with its run's outcome).
     */
    private final Set<CompletableFuture<SlotJobControls.Control>> nows = new HashSet<>();

    /** The thread running one of this schedule's slots, if any. */
    private volatile @Nullable Thread running;

    SlotSchedule(
            SlotJob job,
            TaskScheduler scheduler,
            Runnable task,
            @Nullable Publisher<?> publisher,
            Function<Clock, SlotTrigger> triggerOnClock) {
        this.job = job;
        this.scheduler = scheduler;
        this.task = task;
        this.publisher = publisher;
        this.qualifier =
                task instanceof SchedulingAwareRunnable aware ? aware.getQualifier() : null;
        this.triggerOnClock = triggerOnClock;
    }

    /** Schedules the first link, for the trigger's first slot. */
    void start() {
        synchronized (this) {
            link(new Link(generation, false, null));
        }
    }

    /** Has the job catch up now, on its scheduler: right after its election was won. */
    void catchUp() {
        synchronized (this) {
            if (!ended.isDone()) {
                link(new Link(generation, true, null));
            }
        }
    }

    /**
     * Runs the job's current slot now, for an operator, as a one-shot task on the job's scheduler
     * (see {@link SlotJob#runNow}); the chain goes on from the slot after it.
     *
     * @return what became of it; refused as not scheduled if the chain ends first
     */
    CompletableFuture<SlotJobControls.Control> runNow() {
        CompletableFuture<SlotJobControls.Control> result = new CompletableFuture<>();
        synchronized (this) {
            if (!ended.isDone()) {
                try {
                    Now now = new Now(result);
                    scheduler.schedule(now, now);
                    nows.add(result);
                    result.whenComplete((control, ex) -> forget(result));
                    return result;
                } catch (TaskRejectedException ex) {
                    logger.debug("redlease: " + job + " cannot run now: its scheduler refused", ex);
                }
            }
        }
        result.complete(job.notScheduled());
        return result;
    }

    private synchronized void forget(CompletableFuture<SlotJobControls.Control> now) {
        nows.remove(now);
    }

    /** Returns the clock of the scheduler that runs the links. */
    Clock clock() {
        Clock known = clock;
        return known != null ? known : scheduler.getClock();
    }

    /** Returns the slots; known once the first link has been scheduled. */
    SlotTrigger trigger() {
        SlotTrigger known = trigger;
        if (known == null) {
            throw new IllegalStateException("redlease: " + job + " has no clock yet");
        }
        return known;
    }

    /** Computes a cron expression's slots in the zone its ledger holds, where it names none. */
    void rezone(ZoneId zone) {
        if (trigger instanceof SlotTrigger.Cron cron && !cron.clock().getZone().equals(zone)) {
            trigger = cron.inZone(zone);
        }
    }

    /** Counts a fixed rate's slots from the start its ledger holds. */
    void rephase(Instant epoch) {
        if (trigger instanceof SlotTrigger.FixedRate rate && !rate.epoch().equals(epoch)) {
            trigger = rate.from(epoch);
        }
    }

    private void learn(Clock schedulerClock) {
        if (clock == null) {
            clock = schedulerClock;
            trigger = triggerOnClock.apply(schedulerClock);
        }
    }

    private void fire(Link link) {
        if (link.catchUp) {
            Instant next = job.catchUp(this);
            if (next != null) {
                restart(next);
            }
            return;
        }
        Instant slot = link.slot;
        if (slot == null || isStale(link)) {
            return;
        }
        Instant next = job.tick(this, slot);
        synchronized (this) {
            if (link.generation == generation && next != null) {
                link(new Link(generation, false, next));
            }
        }
    }

    /** Replaces the link in waiting with one for {@code next}. */
    private synchronized void restart(Instant next) {
        generation++;
        if (pending != null) {
            pending.cancel(false);
        }
        link(new Link(generation, false, next));
    }

    private synchronized boolean isStale(Link link) {
        return link.generation != generation || ended.isDone();
    }

    // Called holding this.
    private void link(Link link) {
        if (ended.isDone()) {
            return;
        }
        try {
            ScheduledFuture<?> future = scheduler.schedule(link, link);
            if (!link.catchUp) {
                pending = future;
            }
        } catch (TaskRejectedException ex) {
            logger.debug("redlease: " + job + " stops: its scheduler takes no more tasks", ex);
            ended.cancel(false);
        }
    }

    /** Records the thread that runs a slot now, or null when it is done. */
    void running(@Nullable Thread thread) {
        running = thread;
    }

    /**
     * Ends the chain. A slot running now is not marked; with {@code mayInterruptIfRunning} its
     * thread is interrupted (and no other scheduler thread is).
     */
    @Override
    public synchronized boolean cancel(boolean mayInterruptIfRunning) {
        if (!ended.cancel(false)) {
            return false;
        }
        if (pending != null) {
            pending.cancel(false);
        }
        for (CompletableFuture<SlotJobControls.Control> now : List.copyOf(nows)) {
            now.complete(job.notScheduled());
        }
        Thread thread = running;
        if (mayInterruptIfRunning && thread != null) {
            thread.interrupt();
        }
        return true;
    }

    @Override
    public boolean isCancelled() {
        return ended.isCancelled();
    }

    @Override
    public boolean isDone() {
        return ended.isDone();
    }

    @Override
    public Object get() throws InterruptedException, ExecutionException {
        return ended.get();
    }

    @Override
    public Object get(long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        return ended.get(timeout, unit);
    }

    @Override
    public synchronized long getDelay(TimeUnit unit) {
        if (ended.isDone() || pending == null) {
            return 0;
        }
        return pending.getDelay(unit);
    }

    @Override
    public int compareTo(Delayed other) {
        return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public String toString() {
        return "SlotSchedule[" + job + "]";
    }

    /**
     * An operator's run-now: a one-shot task on the job's scheduler (routed like the links, and
     * learning the scheduler's clock like them) that runs the job's current slot and restarts the
     * chain after it.
     */
    private final class Now extends OneShot {

        private final CompletableFuture<SlotJobControls.Control> result;

        Now(CompletableFuture<SlotJobControls.Control> result) {
            this.result = result;
        }

        @Override
        Instant fireAt(Instant now) {
            return now;
        }

        @Override
        public void run() {
            try {
                synchronized (SlotSchedule.this) {
                    if (result.isDone()) {
                        return; // the chain ended while it waited
                    }
                    nows.remove(result); // from here on its run answers, even if cancelled
                }
                SlotJob.RunNow done = job.runNow(SlotSchedule.this);
                Instant next = done.next();
                if (next != null && !ended.isDone()) {
                    restart(next);
                }
                result.complete(done.control());
            } catch (RuntimeException | Error ex) {
                logger.error("redlease: " + job + " failed to run now", ex);
                result.completeExceptionally(ex);
            }
        }

        @Override
        public String toString() {
            return job + " run now";
        }
    }

    /**
     * One run of the chain: a tick for one slot, or a catch-up after election. As the trigger of
     * its own one-shot task it fires once, at its slot on the scheduler's clock (a catch-up at
     * once), and learns that clock.
     */
    private final class Link extends OneShot {

        final long generation;

        final boolean catchUp;

        volatile @Nullable Instant slot;

        Link(long generation, boolean catchUp, @Nullable Instant slot) {
            this.generation = generation;
            this.catchUp = catchUp;
            this.slot = slot;
        }

        @Override
        @Nullable Instant fireAt(Instant now) {
            if (catchUp) {
                return now;
            }
            Instant at = slot;
            if (at == null) {
                at = trigger().first(now);
                slot = at;
            }
            return at;
        }

        @Override
        public void run() {
            try {
                fire(this);
            } catch (CancellationException ex) {
                // Cancelled while it ran: the chain has ended.
            } catch (RuntimeException | Error ex) {
                logger.error("redlease: " + job + " failed to schedule its next run", ex);
            }
        }

        @Override
        public String toString() {
            return job + (catchUp ? " catch-up" : " slot " + slot);
        }
    }

    /**
     * A task that is its own trigger and fires once: the first time the scheduler asks, it learns
     * the scheduler's clock and answers {@link #fireAt}; after that, never again.
     */
    private abstract class OneShot implements SchedulingAwareRunnable, Trigger {

        private volatile boolean asked;

        /** Returns when to fire, given the scheduler's time now; null never to. */
        abstract @Nullable Instant fireAt(Instant now);

        @Override
        public final @Nullable Instant nextExecution(TriggerContext context) {
            if (asked) {
                return null;
            }
            asked = true;
            learn(context.getClock());
            return fireAt(context.getClock().instant());
        }

        @Override
        public final @Nullable String getQualifier() {
            return qualifier;
        }
    }
}
