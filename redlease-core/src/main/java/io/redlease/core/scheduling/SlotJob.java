package io.redlease.core.scheduling;

import io.redlease.core.Slot;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.annotation.LeaderOnlyRuns;
import io.redlease.core.scheduling.SlotJobs.Result;
import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;

/**
 * One once-per-slot {@code @Scheduled} method. Each link of its {@link SlotSchedule} comes here
 * with the slot it was scheduled for; on the leader, the term claims the job once (reading the
 * ledger), and {@link SlotPolicy} decides what the slot means against the term's view of the
 * ledger; each run ({@link SlotRun}) is marked only if it completed while the term was active. Runs
 * of one job never overlap within an instance, an operator's run-now included.
 *
 * <p>Before each run the job reads whether it is paused (one round trip): a paused job's slots, and
 * those that came due before its last resume, are settled without running. A follower reads it at
 * each link (of a partitioned election's job, partition 0's only), so that what it shows stays
 * current.
 */
final class SlotJob {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    final String id;

    final String electionId;

    /**
     * The partition this job runs for, or -1 for a job of one election. A job of a partitioned
     * election ({@code @LeaderOnly(partitions)}) is a template that Spring schedules; it runs as
     * one job per partition ({@link PartitionSlotJobs}), each with its own ledger and schedule.
     */
    final int partition;

    private final SlotJobs.Definition definition;

    /** The jobs per partition of a template, once it is scheduled. */
    volatile @Nullable PartitionSlotJobs partitionJobs;

    /**
     * The partition terms a template's instance won before Spring scheduled it, by partition;
     * guarded by the template, applied to the partitions' jobs when they start.
     */
    private final Map<Integer, Elected> wonBeforeScheduling = new HashMap<>();

    /**
     * The bean, unwrapped from its proxies, and the method's name (scheduled methods take none).
     */
    private final Object target;

    private final String methodName;

    /** The scheduled method. */
    final Method method;

    /** The policy the annotation sets; {@link MissedSlots#DEFAULT} takes the application's. */
    final MissedSlots missedSlots;

    /** The maximum the annotation sets; 0 takes the application's. */
    final int maxCatchUp;

    private final boolean interruptOnStepDown;

    /** Whether its cron expression is "-": Spring does not schedule it. */
    final boolean disabled;

    private final SlotJobs jobs;

    private volatile @Nullable SlotLedger ledger;

    private final ReentrantLock lock = new ReentrantLock();

    private volatile @Nullable SlotSchedule schedule;

    /** What the current term knows of the ledger; guarded by {@link #lock}. */
    private @Nullable Progress progress;

    /** The ledger as this instance last saw it, for the lag gauge. */
    private volatile SlotLedger.State known = SlotLedger.State.EMPTY;

    /** Whether the job is paused, as this instance last read its ledger; null before the first. */
    private volatile @Nullable Pause pause;

    /** Whether a reader of {@link #pausedAt()} has had the ledger read once. */
    private volatile boolean pauseAsked;

    /** When this instance last won a term of the job's election, if it was told. */
    private volatile @Nullable Elected elected;

    /**
     * A term that cannot run the job (its slots would differ from the ledger's); guarded by lock.
     */
    private long refusedToken;

    private final SlotPolicy policy = new SlotPolicy(this);

    private volatile @Nullable Advised advised;

    private volatile @Nullable Advisor advisor;

    SlotJob(SlotJobs jobs, SlotJobs.Definition definition, Object target, Method method) {
        this(jobs, definition, target, method, -1);
    }

    private SlotJob(
            SlotJobs jobs,
            SlotJobs.Definition definition,
            Object target,
            Method method,
            int partition) {
        this.jobs = jobs;
        this.definition = definition;
        this.partition = partition;
        this.id = definition.id();
        this.electionId = definition.electionId();
        this.missedSlots = definition.missedSlots();
        this.maxCatchUp = definition.maxCatchUp();
        this.interruptOnStepDown = definition.interruptOnStepDown();
        this.disabled = definition.disabled();
        this.target = target;
        this.method = method;
        this.methodName = method.getName();
    }

    /** Returns the class of the bean, unwrapped from its proxies. */
    Class<?> targetClass() {
        return target.getClass();
    }

    /** Returns whether this is the template of a partitioned election's jobs. */
    boolean isPartitioned() {
        return partition < 0 && !definition.partitions().isEmpty();
    }

    /** Returns the partitioned election id, or empty for a job of one election. */
    String partitions() {
        return definition.partitions();
    }

    /** Returns this template's job for one partition: same method, its own ledger and schedule. */
    SlotJob forPartition(int partition) {
        return new SlotJob(jobs, definition, target, method, partition);
    }

    /** Returns whether this job is the given method of the given bean. */
    boolean runs(@Nullable Object bean, Method method) {
        return bean == target
                && method.getParameterCount() == 0
                && method.getName().equals(methodName);
    }

    SlotLedger ledger() {
        SlotLedger current = ledger;
        if (current == null) {
            current = new SlotLedger(jobs.elector(this), id);
            ledger = current;
        }
        return current;
    }

    @Nullable SlotSchedule schedule() {
        return schedule;
    }

    /**
     * Starts the job's links in place of the task Spring was scheduling for its method; when this
     * instance leads already (it was elected before Spring scheduled the job), catches up at once.
     */
    SlotSchedule start(SlotSchedule started) {
        synchronized (this) {
            if (schedule != null) {
                throw new IllegalStateException(
                        "redlease: once-per-slot job " + id + " is scheduled twice");
            }
            schedule = started;
        }
        started.start();
        if (jobs.leading(this) != null) {
            started.catchUp();
        }
        return started;
    }

    /** Records when this instance won a term of the job's election, on the job's clock. */
    void elected(long token, Instant at) {
        elected = new Elected(token, at.truncatedTo(ChronoUnit.MILLIS));
    }

    /**
     * Remembers, on a template not scheduled yet, that this instance won a term of a partition, so
     * that the partition's job counts its slots from then once it starts; caller holds the
     * template's lock.
     */
    void wonBeforeScheduling(int partition, long token, Instant at) {
        wonBeforeScheduling.put(partition, new Elected(token, at.truncatedTo(ChronoUnit.MILLIS)));
    }

    /**
     * Passes on to a partition's job the term its template's instance won before the job was
     * scheduled, if any; caller holds the template's lock.
     */
    void applyWonBeforeScheduling(int partition, SlotJob job) {
        Elected won = wonBeforeScheduling.remove(partition);
        if (won != null) {
            job.elected = won;
        }
    }

    /**
     * Moves the advice that confirms a run to the end of the bean's advice, innermost: advice other
     * post-processors added after redlease's would otherwise run inside it.
     */
    void adviseInnermost() {
        Advised advised = this.advised;
        Advisor advisor = this.advisor;
        if (advised != null && advisor != null && advised.removeAdvisor(advisor)) {
            advised.addAdvisor(advisor);
        }
    }

    /** Remembers the advice that confirms runs on the bean's proxy. */
    void advisedBy(Advised advised, Advisor advisor) {
        this.advised = advised;
        this.advisor = advisor;
    }

    /** Makes the term read the ledger again: after a mark whose outcome is unknown. */
    void forgetProgress() {
        progress = null;
    }

    /**
     * Handles a link of the schedule, for one slot.
     *
     * @return the slot of the next link
     */
    @Nullable Instant tick(SlotSchedule schedule, Instant slot) {
        SlotTrigger trigger = schedule.trigger();
        lock.lock();
        try {
            Term term = jobs.leading(this);
            Progress at = term == null ? null : takeOver(term, schedule, slot.minusMillis(1));
            if (term == null || at == null) {
                // A follower keeps ticking on its own clock, for nothing that is past, and keeps
                // what it shows of the pause current (for a partitioned job, partition 0 shows
                // it: the partitions it does not hold cost no round trip).
                if (partition <= 0) {
                    refreshPause();
                }
                Instant now = now(schedule);
                return trigger.after(
                        trigger instanceof SlotTrigger.FixedDelay ? now : max(slot, now));
            }
            policy.runDue(term, at, schedule, slot);
            return policy.next(at, schedule, slot);
        } catch (RuntimeException ex) {
            logger.warn("redlease: once-per-slot job " + id + " could not handle slot " + slot, ex);
            return trigger.after(max(slot, now(schedule)));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Catches up right after election, on the job's scheduler.
     *
     * @return the slot of the next link, or null when this instance does not lead
     */
    @Nullable Instant catchUp(SlotSchedule schedule) {
        lock.lock();
        try {
            Term term = jobs.leading(this);
            Progress at = term == null ? null : takeOver(term, schedule, now(schedule));
            return at == null
                    ? null
                    : policy.next(at, schedule, at.until != null ? at.until : now(schedule));
        } catch (RuntimeException ex) {
            logger.warn("redlease: once-per-slot job " + id + " could not catch up", ex);
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Claims the job for the term the first time the term touches it, and handles the slots that
     * came due before the term was elected, as the policy says.
     *
     * @param since where the job's slots begin if it has never been claimed: before the slot the
     *     first claim comes for
     * @return the term's view of the ledger, or null when the term can no longer claim the job
     */
    private @Nullable Progress takeOver(Term term, SlotSchedule schedule, Instant since) {
        Progress current = progress;
        if (current != null && current.token == term.token()) {
            return current;
        }
        progress = null;
        SlotTrigger trigger = schedule.trigger();
        ZoneId zone = trigger instanceof SlotTrigger.Cron cron ? cron.clockZone() : null;
        // A fixed rate's start goes to the ledger at the first claim, before any run: a run cut
        // short before the first mark leaves the successor the same slots.
        Instant epoch = trigger instanceof SlotTrigger.FixedRate rate ? rate.epoch() : null;
        SlotLedger.State state = ledger().claim(term, since, zone, epoch).orElse(null);
        if (state == null) {
            logger.debug("redlease: once-per-slot job " + id + ": " + term + " cannot claim it");
            return null;
        }
        known = state;
        learnPause(state);
        if (zone != null && state.zone() != null) {
            // The first instance to claim the job set the zone its slots are computed in.
            schedule.rezone(ZoneId.of(state.zone()));
        }
        if (state.epoch() != null) {
            schedule.rephase(state.epoch());
        }
        Progress taken = new Progress(term.token(), state);
        progress = taken;
        Elected won = elected;
        Instant now = now(schedule);
        taken.until =
                won != null && won.token == term.token() && won.at.isBefore(now) ? won.at : now;
        policy.catchUpMissed(term, taken, schedule);
        return taken;
    }

    /**
     * Runs one slot inside the term and marks it if the run completed while the term lasted; first
     * reads whether the job is paused, and settles the slot without running it when it is, or when
     * the slot came due before the job's last resume.
     */
    SlotRun.Outcome run(
            Term term, Progress at, SlotSchedule schedule, Instant slot, boolean catchUp) {
        SlotLedger.State state = readLedger(term);
        at.resumed(state.resumedAt());
        if (state.paused() || (state.resumedAt() != null && !slot.isAfter(state.resumedAt()))) {
            at.settle(slot);
            if (schedule.trigger() instanceof SlotTrigger.FixedDelay) {
                at.delayFrom = now(schedule); // the next link comes one delay later
            }
            record(slot, Result.PAUSED);
            return state.paused() ? SlotRun.Outcome.PAUSED : SlotRun.Outcome.SETTLED;
        }
        at.attempt(slot);
        return new SlotRun(this, new Slot(id, slot, catchUp)).execute(term, at, schedule);
    }

    /**
     * Runs the job's current slot now, for an operator, on the scheduler's thread: on the leader
     * only, and not while the job is paused. The current slot is the oldest one the term has not
     * handled, due or not (for a fixed delay: now); it runs and is marked exactly as a scheduled
     * run of it would be, so no link runs it again.
     *
     * @return what became of it, and where the schedule's next link goes (null: leave it)
     */
    RunNow runNow(SlotSchedule schedule) {
        lock.lock();
        try {
            Term term = jobs.leading(this);
            Progress at = term == null ? null : takeOver(term, schedule, now(schedule));
            if (term == null || at == null) {
                return new RunNow(
                        jobs.controls().refused(this, SlotJobControls.Refusal.NOT_LEADING), null);
            }
            SlotLedger.State state = readLedger(term);
            at.resumed(state.resumedAt());
            if (state.paused()) {
                return new RunNow(
                        jobs.controls().refused(this, SlotJobControls.Refusal.PAUSED), null);
            }
            SlotTrigger trigger = schedule.trigger();
            Instant now = now(schedule);
            Instant slot;
            if (trigger instanceof SlotTrigger.FixedDelay) {
                Instant done = at.completedSlot;
                slot = done != null && !now.isAfter(done) ? done.plusMillis(1) : now;
            } else {
                Instant handled = at.handled();
                slot = trigger.after(handled != null ? handled : now);
            }
            if (slot == null) {
                return new RunNow(
                        jobs.controls().refused(this, SlotJobControls.Refusal.NOT_SCHEDULED), null);
            }
            SlotRun.Outcome outcome = run(term, at, schedule, slot, false);
            SlotJobControls.Outcome result =
                    switch (outcome) {
                        case COMPLETED -> SlotJobControls.Outcome.COMPLETED;
                        case FAILED -> SlotJobControls.Outcome.FAILED;
                        default -> SlotJobControls.Outcome.REFUSED;
                    };
            SlotJobControls.Refusal refusal =
                    switch (outcome) {
                        case PAUSED, SETTLED -> SlotJobControls.Refusal.PAUSED;
                        case NOT_STARTED -> SlotJobControls.Refusal.NOT_LEADING;
                        default -> null;
                    };
            Instant next =
                    outcome == SlotRun.Outcome.NOT_STARTED || !term.isActive()
                            ? null
                            : policy.next(at, schedule, slot);
            return new RunNow(
                    new SlotJobControls.Control(
                            id,
                            partitionOrNull(),
                            result,
                            refusal,
                            slot,
                            null,
                            result != SlotJobControls.Outcome.REFUSED),
                    next);
        } finally {
            lock.unlock();
        }
    }

    /** What a run-now did, and where the schedule's next link goes (null: leave it). */
    record RunNow(SlotJobControls.Control control, @Nullable Instant next) {}

    SlotJobControls.Control notScheduled() {
        return jobs.controls().notScheduled(this);
    }

    @Nullable Integer partitionOrNull() {
        return partition < 0 ? null : partition;
    }

    /** Reads the ledger, and learns from it whether the job is paused. */
    SlotLedger.State readLedger() {
        SlotLedger.State state = ledger().read();
        learnPause(state);
        return state;
    }

    /**
     * Reads the ledger for the job's scheduling, bounded like a fenced write (by the term's
     * deadline; without a term, the time to live), and learns from it whether the job is paused.
     */
    SlotLedger.State readLedger(@Nullable Term term) {
        SlotLedger.State state = ledger().read(term);
        learnPause(state);
        return state;
    }

    /** Learns whether the job is paused from a ledger as read. */
    void learnPause(SlotLedger.State state) {
        pause = new Pause(state.pausedAt(), state.resumedAt());
    }

    /** Reads whether the job is paused, keeping what it knew if Redis cannot be read. */
    private void refreshPause() {
        try {
            readLedger(null);
        } catch (RuntimeException ex) {
            logger.debug("redlease: " + this + " could not read whether it is paused", ex);
        }
    }

    /**
     * Returns whether the job is paused as this instance last read it; null when it was never read.
     * The first call reads it if nothing has yet (once: after a failure the job's own reads, at its
     * next run or link, fill it in), so that a health check or a scrape does not wait on an
     * unreachable Redis each time.
     */
    SlotJobControls.@Nullable PauseState pauseState() {
        Pause known = pause;
        if (known == null && !pauseAsked) {
            pauseAsked = true;
            refreshPause();
            known = pause;
        }
        return known == null ? null : new SlotJobControls.PauseState(known.pausedAt);
    }

    /** Pauses or resumes the job on every instance; returns whether its state changed. */
    boolean pause(boolean pausing) {
        Instant now = clock().instant().truncatedTo(ChronoUnit.MILLIS);
        boolean changed = pausing ? ledger().pause(now) : ledger().resume(now);
        refreshPause();
        return changed;
    }

    /** Records a run's slot as completed, as the ledger now holds it. */
    void completed(SlotLedger.State state) {
        known = state;
    }

    LeaderOnlyRuns runs() {
        return jobs.runs();
    }

    LeaderOnlyRun runOf(Term term, Slot slot) {
        return jobs.runOf(this, term, slot);
    }

    boolean interruptOnStepDown() {
        return interruptOnStepDown;
    }

    void record(Instant slot, Result result) {
        jobs.record(this, slot, result);
    }

    void record(Instant slot, Result result, long count) {
        jobs.record(this, slot, result, count);
    }

    void recordMissed(Instant slot, long count, boolean atLeast) {
        jobs.recordMissed(this, slot, count, atLeast);
    }

    MissedSlots missedSlots() {
        return jobs.policy(this);
    }

    int maxCatchUpSlots() {
        return jobs.maxCatchUp(this);
    }

    /** Returns the scheduler's time, to the millisecond the ledger keeps. */
    static Instant now(SlotSchedule schedule) {
        return schedule.clock().instant().truncatedTo(ChronoUnit.MILLIS);
    }

    static Instant max(Instant a, @Nullable Instant b) {
        return b != null && b.isAfter(a) ? b : a;
    }

    /** How long the slot after the completed one has been due, as this instance last knew. */
    Duration lag() {
        SlotSchedule current = schedule;
        SlotLedger.State state = known;
        Pause paused = pause;
        if (current == null || state.completedSlot() == null) {
            return Duration.ZERO;
        }
        if (paused != null && paused.pausedAt != null) {
            return Duration.ZERO; // held, not behind
        }
        SlotTrigger trigger = current.trigger();
        Instant resumed = paused == null ? null : paused.resumedAt;
        Instant next =
                trigger.after(
                        max(
                                trigger instanceof SlotTrigger.FixedDelay
                                        ? state.completedAt()
                                        : state.completedSlot(),
                                resumed));
        Instant now = now(current);
        return next == null || !next.isBefore(now) ? Duration.ZERO : Duration.between(next, now);
    }

    /** Returns the next slot after the one a ledger holds as completed, or null. */
    @Nullable Instant nextAfter(SlotLedger.State state) {
        SlotSchedule current = schedule;
        Instant from =
                current != null && current.trigger() instanceof SlotTrigger.FixedDelay
                        ? state.completedAt()
                        : state.completedSlot();
        return current == null || from == null ? null : current.trigger().after(from);
    }

    /** Describes the trigger, once scheduled. */
    String describeTrigger() {
        SlotSchedule current = schedule;
        return current == null ? "not scheduled" : String.valueOf(current.trigger());
    }

    Clock clock() {
        SlotSchedule current = schedule;
        return current != null ? current.clock() : Clock.systemDefaultZone();
    }

    @Override
    public String toString() {
        return "once-per-slot job " + id + (partition < 0 ? "" : " (partition " + partition + ")");
    }

    /** Whether the job is paused (since when), and when it was last resumed, as read. */
    private record Pause(@Nullable Instant pausedAt, @Nullable Instant resumedAt) {}

    /** A term this instance won, and when, on the job's clock. */
    private record Elected(long token, Instant at) {}
}
