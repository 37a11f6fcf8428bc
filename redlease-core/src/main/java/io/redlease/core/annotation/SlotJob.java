package io.redlease.core.annotation;

import io.redlease.core.Elector;
import io.redlease.core.Slot;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import io.redlease.core.TermEndedException;
import io.redlease.core.annotation.SlotJobs.Result;
import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.scheduling.TaskScheduler;

/**
 * One once-per-slot {@code @Scheduled} method: decides which slots a tick or an election runs, runs
 * them inside the term with the slot bound to the thread, and marks each completed slot in the
 * job's {@link SlotLedger}. Runs of one job never overlap within an instance.
 */
final class SlotJob {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    /** A run this job asked for through its proxy, for the interceptor to recognise. */
    private static final ThreadLocal<Pending> PENDING = new ThreadLocal<>();

    /** What {@link #invoke} returns when this instance does not lead. */
    static final Object NOT_LEADER = new Object();

    final String id;

    final String electionId;

    final SlotTrigger trigger;

    /** The policy the annotation sets; {@link MissedSlots#DEFAULT} takes the application's. */
    final MissedSlots policy;

    /** The maximum the annotation sets; 0 takes the application's. */
    final int maxCatchUp;

    private final SlotJobs jobs;

    private final Object proxy;

    private final Method method;

    private final boolean interruptOnStepDown;

    final String schedulerName;

    private final ReentrantLock running = new ReentrantLock();

    private volatile @Nullable SlotLedger ledger;

    private volatile SlotLedger.State known = SlotLedger.State.EMPTY;

    /** The term that has claimed the job and caught up its missed slots. */
    private volatile long caughtUp;

    /** The newest slot that the current term skipped at election ({@link MissedSlots#SKIP}). */
    private volatile @Nullable Instant skippedThrough;

    /** The fixed delay's next slot that a one-time task is scheduled for. */
    private volatile @Nullable Instant scheduledFor;

    SlotJob(
            SlotJobs jobs,
            String id,
            String electionId,
            Object proxy,
            Method method,
            SlotTrigger trigger,
            MissedSlots policy,
            int maxCatchUp,
            boolean interruptOnStepDown,
            String schedulerName) {
        this.jobs = jobs;
        this.id = id;
        this.electionId = electionId;
        this.proxy = proxy;
        this.method = AopUtils.selectInvocableMethod(method, proxy.getClass());
        this.trigger = trigger;
        this.policy = policy;
        this.maxCatchUp = maxCatchUp;
        this.interruptOnStepDown = interruptOnStepDown;
        this.schedulerName = schedulerName;
    }

    /**
     * Handles a call of the method: the scheduler's tick, or a run this job asked for.
     *
     * @return the method's result, or {@link #NOT_LEADER}
     */
    @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Pending pending = PENDING.get();
        if (pending != null && pending.job == this) {
            PENDING.remove();
            return body(invocation, pending.term, pending.slot);
        }
        Term term = jobs.leading(electionId);
        if (term == null) {
            return NOT_LEADER;
        }
        running.lockInterruptibly();
        try {
            return tick(term, invocation);
        } finally {
            running.unlock();
        }
    }

    /** Runs what is due right after election. */
    void runDue() {
        runDue(false);
    }

    /**
     * Runs what is due now outside the scheduler's ticks: after election, or at a fixed delay's
     * next slot.
     *
     * @param onTime whether this run was scheduled for the slot, and so may fire as early as a tick
     */
    private void runDue(boolean onTime) {
        Term term = jobs.leading(electionId);
        if (term == null) {
            return;
        }
        running.lock();
        try {
            if (!takeOver(term, true)) {
                return;
            }
            runDueSlots(term, null, onTime);
        } catch (Throwable ex) {
            logger.error("redlease: once-per-slot job " + id + " could not run its due slot", ex);
        } finally {
            running.unlock();
        }
    }

    private @Nullable Object tick(Term term, MethodInvocation invocation) throws Throwable {
        // A tick that takes over handles the missed slots itself, with its own slot the newest.
        if (!takeOver(term, false)) {
            return NOT_LEADER;
        }
        return runDueSlots(term, invocation, true);
    }

    /**
     * Runs the slots due now as the policy says: older ones as catch-ups, the newest last.
     *
     * @param invocation the tick's own call, which runs the newest slot; null outside a tick
     * @param tick whether a slot may be due a little early, see {@link SlotTrigger#due}
     * @return the tick's result
     */
    private @Nullable Object runDueSlots(
            Term term, @Nullable MethodInvocation invocation, boolean tick) throws Throwable {
        SlotLedger.State state = afterSkipped(read());
        int limit = jobs.policy(this) == MissedSlots.RUN_ALL ? jobs.maxCatchUp(this) + 1 : 1;
        SlotTrigger.Due due = trigger.due(state, now(), limit, tick);
        if (due.slots().isEmpty()) {
            if (invocation != null) {
                Instant completed = state.completedSlot();
                if (logger.isDebugEnabled()) {
                    logger.debug(
                            "redlease: once-per-slot job "
                                    + id
                                    + " skips a tick: slot "
                                    + completed
                                    + " has completed and the next is "
                                    + trigger.next(state, now()));
                }
                jobs.record(this, completed != null ? completed : now(), Result.SKIPPED);
            }
            scheduleNext();
            return null;
        }
        missed(due);
        List<Instant> slots = due.slots();
        for (int i = 0; i < slots.size() - 1; i++) {
            if (run(term, slots.get(i), true, null) == null) {
                return null;
            }
        }
        Object result = run(term, slots.get(slots.size() - 1), false, invocation);
        scheduleNext();
        return result instanceof Ran ran ? ran.result : null;
    }

    /**
     * Claims the job for the term the first time the term touches it, so that older terms can no
     * longer mark slots, and catches up what was missed while no instance ran it.
     *
     * @param catchUp whether to run missed slots now (after election) rather than leave them to the
     *     calling tick
     * @return false when a newer term exists
     */
    private boolean takeOver(Term term, boolean catchUp) throws Throwable {
        if (caughtUp == term.token()) {
            return true;
        }
        SlotLedger ledger = ledger();
        if (!ledger.claim(term)) {
            return false;
        }
        caughtUp = term.token();
        skippedThrough = null;
        if (!catchUp) {
            return true;
        }
        SlotLedger.State state = read();
        if (trigger instanceof SlotTrigger.FixedDelay) {
            // One slot at most is due; with SKIP the next tick runs it.
            if (jobs.policy(this) != MissedSlots.SKIP) {
                SlotTrigger.Due due = trigger.due(state, now(), 1, false);
                for (Instant slot : due.slots()) {
                    run(term, slot, true, null);
                }
            }
            return true;
        }
        MissedSlots policy = jobs.policy(this);
        int limit = policy == MissedSlots.RUN_ALL ? jobs.maxCatchUp(this) : 1;
        SlotTrigger.Due due = trigger.due(state, now(), limit, false);
        if (policy == MissedSlots.SKIP) {
            if (due.count() > 0) {
                Instant newest = due.slots().get(due.slots().size() - 1);
                skippedThrough = newest;
                jobs.recordMissed(this, newest, due.count());
            }
            return true;
        }
        missed(due);
        for (Instant slot : due.slots()) {
            if (run(term, slot, true, null) == null) {
                break;
            }
        }
        return true;
    }

    /** Counts the slots that were due but are dropped. */
    private void missed(SlotTrigger.Due due) {
        long dropped = due.count() - due.slots().size();
        if (dropped > 0) {
            jobs.recordMissed(this, due.slots().get(0), dropped);
        }
    }

    /**
     * Runs one slot and marks it complete.
     *
     * @param invocation the tick's own call, or null to call the method through its proxy
     * @return the method's result wrapped in {@link Ran}, or null when it did not complete
     */
    private @Nullable Object run(
            Term term, Instant slot, boolean catchUp, @Nullable MethodInvocation invocation)
            throws Throwable {
        Slot bound = new Slot(id, slot, catchUp);
        Object result;
        try {
            if (invocation != null) {
                result = body(invocation, term, bound);
            } else {
                PENDING.set(new Pending(this, term, bound));
                try {
                    result = AopUtils.invokeJoinpointUsingReflection(proxy, method, new Object[0]);
                } finally {
                    PENDING.remove();
                }
            }
        } catch (TermEndedException ex) {
            if (ex.term() == term) {
                return null;
            }
            jobs.record(this, slot, Result.FAILED);
            throw ex;
        } catch (Throwable ex) {
            jobs.record(this, slot, Result.FAILED);
            if (invocation == null) {
                logger.error("redlease: once-per-slot job " + id + " failed slot " + slot, ex);
                return null;
            }
            throw ex;
        }
        Instant completedAt = now();
        SlotLedger.State before = known;
        if (ledger().complete(term, slot, completedAt, slot)) {
            known =
                    new SlotLedger.State(
                            slot,
                            completedAt,
                            before.epoch() != null ? before.epoch() : slot,
                            term.token());
            jobs.record(this, slot, catchUp ? Result.CAUGHT_UP : Result.RUN);
        } else {
            logger.warn(
                    "redlease: once-per-slot job "
                            + id
                            + " ran slot "
                            + slot
                            + " but its term (token "
                            + term.token()
                            + ") was over before the slot was marked; the leader that took"
                            + " over runs it again");
            jobs.record(this, slot, Result.FAILED);
        }
        return new Ran(result);
    }

    private @Nullable Object body(MethodInvocation invocation, Term term, Slot slot)
            throws Exception {
        return SlotJobs.withSlot(
                slot,
                () ->
                        term.execute(
                                new LeaderOnlyInterceptor.Call(invocation), interruptOnStepDown));
    }

    /** For a fixed delay, has the next slot run on time even if the local tick comes later. */
    private void scheduleNext() {
        if (!(trigger instanceof SlotTrigger.FixedDelay)) {
            return;
        }
        Instant next = trigger.next(known, now());
        TaskScheduler scheduler = jobs.scheduler(schedulerName);
        if (next == null || scheduler == null || next.equals(scheduledFor)) {
            return;
        }
        scheduledFor = next;
        scheduler.schedule(() -> runDue(true), next);
    }

    /** Treats the slots skipped at election as done, for this term. */
    private SlotLedger.State afterSkipped(SlotLedger.State state) {
        Instant skipped = skippedThrough;
        Instant completed = state.completedSlot();
        if (skipped == null || (completed != null && !completed.isBefore(skipped))) {
            return state;
        }
        return new SlotLedger.State(skipped, state.completedAt(), state.epoch(), state.token());
    }

    private SlotLedger.State read() {
        SlotLedger.State state = ledger().read();
        known = state;
        return state;
    }

    SlotLedger ledger() {
        SlotLedger current = ledger;
        if (current == null) {
            Elector elector = jobs.elector(electionId);
            current = new SlotLedger(elector, id);
            ledger = current;
        }
        return current;
    }

    Clock clock() {
        return jobs.clock(schedulerName);
    }

    /** Returns the scheduler's time, to the millisecond the ledger keeps. */
    private Instant now() {
        return clock().instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /** How long the slot after the completed one has been due, as this instance last knew. */
    Duration lag() {
        Instant now = now();
        Instant next = trigger.next(known, now);
        return next == null || !next.isBefore(now) ? Duration.ZERO : Duration.between(next, now);
    }

    @Override
    public String toString() {
        return "SlotJob[" + id + ", " + trigger + "]";
    }

    /** A run of this job's own, carried from {@link #run} through the proxy to the interceptor. */
    private record Pending(SlotJob job, Term term, Slot slot) {}

    /** A completed run's result. */
    private record Ran(@Nullable Object result) {}
}
