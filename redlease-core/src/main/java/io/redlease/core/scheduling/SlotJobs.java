package io.redlease.core.scheduling;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import io.redlease.core.Slot;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.annotation.LeaderOnlyRuns;
import io.redlease.core.annotation.LeaderOnlySkipListener;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.Ordered;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;
import org.springframework.scheduling.support.ScheduledMethodRunnable;
import reactor.core.Scannable;

/**
 * The application's once-per-slot jobs ({@code @LeaderOnly(oncePerSlot = true)} on {@code
 * Scheduled} methods), registered by {@code LeaderOnlyAnnotationBeanPostProcessor}, which also
 * makes this a bean.
 *
 * <p>As a {@link SchedulingConfigurer} ordered last, it wraps the scheduler Spring's {@code
 * Scheduled} processing uses: when Spring schedules a job's method, the job gets a {@link
 * SlotSchedule} on that same scheduler instead (the one {@code @Scheduled(scheduler)} names, by
 * bean name or qualifier, else the default one), with slots from the timing Spring resolved. The
 * {@link #observer(String) observer} of an election has its jobs catch up right after it is won;
 * without it they catch up at their next run.
 */
public final class SlotJobs implements SchedulingConfigurer, Ordered {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    /** The default of {@code maxCatchUp}. */
    public static final int DEFAULT_MAX_CATCH_UP = 10;

    /** The largest {@code maxCatchUp}: the most slots one decision runs. */
    public static final int MAX_CATCH_UP = 1000;

    private final Supplier<Elections> elections;

    private final SlotRun.Advice advice = new SlotRun.Advice(this);

    private final Map<JobKey, SlotJob> byMethod = new ConcurrentHashMap<>();

    private final Map<String, SlotJob> byId = new ConcurrentSkipListMap<>();

    /** The publishers reactive jobs returned when Spring scheduled them; guarded by itself. */
    private final Map<Object, SlotJob> publishers = new IdentityHashMap<>();

    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    private volatile MissedSlots defaultPolicy = MissedSlots.RUN_LATEST;

    private volatile int defaultMaxCatchUp = DEFAULT_MAX_CATCH_UP;

    private volatile LeaderOnlyRuns runs = LeaderOnlyRuns.NONE;

    private final SlotJobControls controls = new SlotJobControls(this);

    /**
     * Creates the registry.
     *
     * @param elections supplies the application's elections, looked up when first needed
     */
    public SlotJobs(Supplier<Elections> elections) {
        this.elections = elections;
    }

    /** Returns the slot that the calling thread's once-per-slot run is doing, if any. */
    public static Optional<Slot> current() {
        return Optional.ofNullable(SlotRun.current());
    }

    /**
     * Registers a once-per-slot method of a bean, and adds the advice that lets its runs see it
     * complete, innermost, to the bean's proxy.
     *
     * @param proxy the bean as the application sees it: a proxy with the {@code LeaderOnly} advice
     * @param method the {@code @Scheduled} method
     */
    public void register(Definition definition, Object proxy, Method method) {
        if (!(proxy instanceof Advised advised)) {
            throw new IllegalStateException(
                    "redlease: once-per-slot job " + definition.id() + " needs a proxied bean");
        }
        if (byId.containsKey(definition.id())) {
            throw new IllegalStateException(
                    "redlease: once-per-slot job "
                            + definition.id()
                            + " is registered twice; a job runs on one singleton bean");
        }
        SlotJob job = new SlotJob(this, definition, unwrap(proxy), method);
        byMethod.put(new JobKey(unwrap(proxy), method.getName()), job);
        byId.put(job.id, job);
        Advisor advisor = new DefaultPointcutAdvisor(new RunPointcut(method.getName()), advice);
        advised.addAdvisor(advisor);
        job.advisedBy(advised, advisor);
    }

    /** Matches the once-per-slot method: its name, and no parameters (an overload is not it). */
    private static final class RunPointcut extends StaticMethodMatcherPointcut {

        private final String name;

        RunPointcut(String name) {
            this.name = name;
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return method.getParameterCount() == 0 && method.getName().equals(name);
        }
    }

    /**
     * Wraps the scheduler, after checking that each job's task is among those Spring is about to
     * schedule, as redlease can recognise it: a {@link SchedulingConfigurer} that replaced or
     * wrapped it would leave the job never run.
     */
    @Override
    public void configureTasks(ScheduledTaskRegistrar registrar) {
        List<Runnable> tasks = new ArrayList<>();
        registrar.getCronTaskList().forEach(task -> tasks.add(task.getRunnable()));
        registrar.getFixedRateTaskList().forEach(task -> tasks.add(task.getRunnable()));
        registrar.getFixedDelayTaskList().forEach(task -> tasks.add(task.getRunnable()));
        registrar.getTriggerTaskList().forEach(task -> tasks.add(task.getRunnable()));
        Set<SlotJob> recognised = new HashSet<>();
        for (Runnable task : tasks) {
            SlotJob job = jobFor(task);
            if (job != null) {
                recognised.add(job);
            }
        }
        for (SlotJob job : byId.values()) {
            if (!job.disabled && !recognised.contains(job) && job.schedule() == null) {
                throw new IllegalStateException(
                        "redlease: once-per-slot job "
                                + job.id
                                + " has no task redlease can recognise among those Spring is about"
                                + " to schedule: a SchedulingConfigurer replaced or wrapped it, so"
                                + " the job would never run; leave once-per-slot methods' tasks"
                                + " to Spring (decorate the scheduler's threads instead)");
            }
        }
        TaskScheduler scheduler = registrar.getScheduler();
        if (logger.isDebugEnabled()) {
            logger.debug("redlease: once-per-slot jobs " + byId.keySet() + " run on " + scheduler);
        }
        if (scheduler != null && !(scheduler instanceof SlotTaskScheduler)) {
            registrar.setTaskScheduler(new SlotTaskScheduler(scheduler, this));
        }
    }

    /** Runs after every other {@link SchedulingConfigurer}, so that it wraps their scheduler. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    /**
     * Sets what jobs that do not say otherwise do with missed slots.
     *
     * @param policy {@link MissedSlots#RUN_LATEST}, {@link MissedSlots#SKIP} or {@link
     *     MissedSlots#RUN_ALL}
     * @param maxCatchUp the most missed slots {@link MissedSlots#RUN_ALL} runs, 1 to {@value
     *     #MAX_CATCH_UP}
     */
    public void setDefaults(MissedSlots policy, int maxCatchUp) {
        if (policy == MissedSlots.DEFAULT) {
            throw new IllegalArgumentException(
                    "redlease: the default for missed slots must be RUN_LATEST, SKIP or RUN_ALL");
        }
        if (maxCatchUp < 1 || maxCatchUp > MAX_CATCH_UP) {
            throw new IllegalArgumentException(
                    "redlease: the default maximum of slots to catch up must be 1 to "
                            + MAX_CATCH_UP
                            + ", was "
                            + maxCatchUp);
        }
        this.defaultPolicy = policy;
        this.defaultMaxCatchUp = maxCatchUp;
    }

    /**
     * Sets where each run of a job is reported, around it: the {@link
     * io.redlease.core.annotation.LeaderOnlyRunListener}s; by default nowhere.
     */
    public void setRuns(LeaderOnlyRuns runs) {
        this.runs = runs;
    }

    LeaderOnlyRuns runs() {
        return runs;
    }

    /** Describes a run of a job in a term, for the listeners. */
    LeaderOnlyRun runOf(SlotJob job, Term term, Slot slot) {
        Elector elector = elector(job);
        String election = job.partition < 0 ? elector.name() : partitioned(job.partitions()).name();
        return new LeaderOnlyRun(
                new LeaderOnlySkipListener.MethodRef(election, job.targetClass(), job.method),
                job.partition < 0 ? null : job.partition,
                term.token(),
                slot,
                elector.instanceId());
    }

    /** Adds a listener to every job's runs, skips and missed slots. */
    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /** Returns an observer that has the election's jobs catch up right after it is won. */
    public Observer observer(String electionId) {
        String id = electionId.isEmpty() ? Elections.DEFAULT : electionId;
        return new Observer() {
            @Override
            public void onElected(long token) {
                for (SlotJob job : byId.values()) {
                    if (!job.partitions().isEmpty() || !job.electionId.equals(id)) {
                        continue;
                    }
                    job.elected(token, job.clock().instant());
                    SlotSchedule schedule = job.schedule();
                    if (schedule != null) {
                        schedule.catchUp();
                    }
                }
            }
        };
    }

    /**
     * Returns a listener that has a partitioned election's jobs catch up in a partition right after
     * this instance is assigned it; without it they catch up at their next run.
     *
     * @param partitionsId the partitioned election's id ({@code LeaderOnly#partitions})
     */
    public PartitionListener partitionListener(String partitionsId) {
        return PartitionSlotJobs.catchUp(byId.values(), partitionsId);
    }

    /** Returns the ids of the jobs. */
    /** Returns the operators' controls of these jobs: run now, pause, resume. */
    public SlotJobControls controls() {
        return controls;
    }

    public List<String> jobIds() {
        return List.copyOf(byId.keySet());
    }

    /**
     * Returns each job with its ledger as Redis has it now (one round trip per job), or without the
     * ledger if Redis cannot be read.
     */
    public List<JobView> jobs() {
        List<JobView> views = new ArrayList<>();
        for (SlotJob template : byId.values()) {
            PartitionSlotJobs parts = template.partitionJobs;
            if (parts == null && template.isPartitioned()) {
                continue; // a partitioned job shows its partitions once scheduled
            }
            for (SlotJob job : parts != null ? parts.jobs() : List.of(template)) {
                views.add(view(job));
            }
        }
        return views;
    }

    private JobView view(SlotJob job) {
        SlotLedger.State state;
        try {
            state = job.readLedger();
        } catch (RuntimeException ex) {
            state = null;
        }
        return new JobView(
                job.id,
                job.partition < 0
                        ? job.electionId
                        : PartitionedElection.electionName(
                                partitioned(job.partitions()).name(), job.partition),
                job.describeTrigger(),
                policy(job),
                maxCatchUp(job),
                state == null ? null : state.completedSlot(),
                state == null ? null : state.completedAt(),
                state == null ? null : job.nextAfter(state),
                state == null ? null : state.pausedAt());
    }

    /**
     * Returns how long the slot after a job's completed one has been due, in seconds, as known from
     * its last run; NaN when this instance does not lead the job's election. For a job of a
     * partitioned election, the largest over the partitions this instance holds (NaN when none).
     */
    public double lagSeconds(String jobId) {
        SlotJob job = byId.get(jobId);
        PartitionSlotJobs parts = job == null ? null : job.partitionJobs;
        if (parts != null) {
            return parts.lagSeconds(this);
        }
        if (job == null || job.isPartitioned() || leading(job) == null) {
            return Double.NaN;
        }
        return job.lag().toNanos() / 1e9;
    }

    // For the jobs, their schedules and their controls.

    /** Returns the job with the given id (a partitioned job's template), or null. */
    @Nullable SlotJob job(String id) {
        return byId.get(id);
    }

    /** Returns every job (a partitioned job's template, not its partitions). */
    Collection<SlotJob> all() {
        return byId.values();
    }

    @Nullable SlotJob find(@Nullable Object bean, Method method) {
        return bean == null ? null : byMethod.get(new JobKey(unwrap(bean), method.getName()));
    }

    /**
     * Records a publisher that a once-per-slot reactive method returned before its job was
     * scheduled: Spring calls such a method once, and schedules a task that subscribes to what it
     * returned.
     */
    public void returnedPublisher(@Nullable Object target, Method method, Object publisher) {
        SlotJob job = find(target, method);
        if (job != null && job.schedule() == null) {
            synchronized (publishers) {
                publishers.put(publisher, job);
            }
        }
    }

    /** Returns the job whose method a task Spring is scheduling runs, or null. */
    @Nullable SlotJob jobFor(Runnable task) {
        ScheduledMethodRunnable method = ScheduledMethods.of(task);
        if (method != null) {
            return find(method.getTarget(), method.getMethod());
        }
        Publisher<?> publisher = ScheduledMethods.publisherOf(task);
        if (publisher == null) {
            return null;
        }
        // Spring subscribes through operators of its own: find the method's publisher among them.
        synchronized (publishers) {
            SlotJob job = publishers.get(publisher);
            for (Iterator<? extends Scannable> parents =
                            Scannable.from(publisher).parents().iterator();
                    job == null && parents.hasNext(); ) {
                job = publishers.get(parents.next());
            }
            return job;
        }
    }

    MissedSlots policy(SlotJob job) {
        return job.missedSlots == MissedSlots.DEFAULT ? defaultPolicy : job.missedSlots;
    }

    int maxCatchUp(SlotJob job) {
        return job.maxCatchUp == 0 ? defaultMaxCatchUp : job.maxCatchUp;
    }

    /** Returns the elector a job runs in: its election's, or its partition's. */
    Elector elector(SlotJob job) {
        return job.partition < 0
                ? elections.get().get(job.electionId)
                : partitioned(job.partitions()).elector(job.partition);
    }

    PartitionedElection partitioned(String id) {
        return elections.get().partitioned(id);
    }

    /** Returns the active term on this instance of the election or partition a job runs in. */
    @Nullable Term leading(SlotJob job) {
        return elector(job).term().filter(Term::isActive).orElse(null);
    }

    void record(SlotJob job, Instant slot, Result result) {
        record(job, slot, result, 1);
    }

    void record(SlotJob job, Instant slot, Result result, long count) {
        if (result != Result.SKIPPED && logger.isDebugEnabled()) {
            logger.debug(
                    "redlease: once-per-slot job "
                            + job.id
                            + " slot "
                            + slot
                            + ": "
                            + result
                            + (count > 1 ? " (" + count + " slots)" : ""));
        }
        notify(job, slot, result, count);
    }

    void recordMissed(SlotJob job, Instant slot, long count, boolean atLeast) {
        logger.warn(
                "redlease: once-per-slot job "
                        + job.id
                        + " drops "
                        + (atLeast ? "at least " : "")
                        + count
                        + " missed slot(s) before "
                        + slot
                        + " (missedSlots "
                        + policy(job)
                        + ", maxCatchUp "
                        + maxCatchUp(job)
                        + ")");
        notify(job, slot, Result.MISSED, count);
    }

    private void notify(SlotJob job, Instant slot, Result result, long count) {
        for (Listener listener : listeners) {
            try {
                listener.onSlot(job.id, slot, result, count);
            } catch (RuntimeException ex) {
                logger.warn("redlease: a slot listener failed", ex);
            }
        }
    }

    private static Object unwrap(Object bean) {
        Object current = bean;
        for (Object target = AopProxyUtils.getSingletonTarget(current);
                target != null;
                target = AopProxyUtils.getSingletonTarget(current)) {
            current = target;
        }
        return current;
    }

    /**
     * A once-per-slot method as its annotation defines it, checked when its bean was created.
     *
     * @param id the job's id: the bean name and the method name, joined by a dot
     * @param electionId the election the job runs in
     * @param missedSlots the policy for missed slots; {@link MissedSlots#DEFAULT} takes the default
     * @param maxCatchUp the most missed slots {@link MissedSlots#RUN_ALL} runs; 0 takes the default
     * @param interruptOnStepDown whether a run is interrupted when its term ends
     * @param disabled whether its cron expression is {@code "-"}, so that Spring does not schedule
     *     it
     * @param partitions the partitioned election whose partitions it runs once per slot each (its
     *     id, then also {@code electionId}), or empty for a job of one election
     */
    public record Definition(
            String id,
            String electionId,
            MissedSlots missedSlots,
            int maxCatchUp,
            boolean interruptOnStepDown,
            boolean disabled,
            String partitions) {}

    /** Hears about every job's runs, skipped links and missed slots. */
    @FunctionalInterface
    public interface Listener {

        /**
         * Called after a slot's outcome is known, on the thread that ran or skipped it.
         *
         * @param count how many slots this outcome covers (more than 1 for missed slots)
         */
        void onSlot(String job, Instant slot, Result result, long count);
    }

    /** The outcome of a slot. */
    public enum Result {
        /** The slot ran at its time and was marked complete. */
        RUN("run"),
        /** A run came for a slot that had completed or was dropped, and ran nothing. */
        SKIPPED("skipped"),
        /** A slot that came due while no instance ran it was run later and marked complete. */
        CAUGHT_UP("caught-up"),
        /** Missed slots were dropped, as {@link MissedSlots} and {@code maxCatchUp} say. */
        MISSED("missed"),
        /**
         * Not run: the job was paused when the slot came, or the slot came due before the job's
         * last resume. It is settled, never caught up.
         */
        PAUSED("paused"),
        /**
         * The run threw, was cut short by the end of its term, or its mark was refused: the slot is
         * not marked.
         */
        FAILED("failed");

        private final String tag;

        Result(String tag) {
            this.tag = tag;
        }

        /** Returns the value of the {@code result} tag of the {@code redlease.slots} meter. */
        public String tag() {
            return tag;
        }
    }

    /**
     * A job as the actuator endpoint shows it.
     *
     * @param lastCompletedSlot the latest completed slot, null before the first or when Redis could
     *     not be read
     * @param lastCompletion when it completed
     * @param nextDueSlot the slot after it
     * @param pausedAt when the job was paused, while it is paused (null while it runs, or when
     *     Redis could not be read)
     */
    public record JobView(
            String job,
            String election,
            String trigger,
            MissedSlots missedSlots,
            int maxCatchUp,
            @Nullable Instant lastCompletedSlot,
            @Nullable Instant lastCompletion,
            @Nullable Instant nextDueSlot,
            @Nullable Instant pausedAt) {}

    /** A bean and the name of one of its methods (scheduled methods take no arguments). */
    private record JobKey(Object target, String method) {

        @Override
        public boolean equals(Object other) {
            return other instanceof JobKey that
                    && target == that.target
                    && method.equals(that.method);
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(target) * 31 + method.hashCode();
        }
    }
}
