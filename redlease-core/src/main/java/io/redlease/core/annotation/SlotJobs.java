package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import io.redlease.core.Slot;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.scheduling.TaskScheduler;

/**
 * The application's once-per-slot jobs ({@code @LeaderOnly(oncePerSlot = true)} on {@code
 * Scheduled} methods), registered by {@link LeaderOnlyAnnotationBeanPostProcessor}.
 *
 * <p>Jobs run on the scheduler that runs their {@code @Scheduled} method: the bean named by {@code
 * Scheduled#scheduler()}, else the application's only {@link TaskScheduler} or the one named {@code
 * taskScheduler}. Slots are computed on that scheduler's clock. The {@link #observer(String)} of an
 * election has its jobs catch up right after it is won; without it (or without a scheduler bean)
 * they catch up at their next tick.
 */
public final class SlotJobs {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    private static final ThreadLocal<Slot> CURRENT = new ThreadLocal<>();

    /** The default of {@link LeaderOnly#maxCatchUp()}. */
    public static final int DEFAULT_MAX_CATCH_UP = 10;

    private final BeanFactory beanFactory;

    private final Supplier<Elections> elections;

    private final Map<JobKey, SlotJob> byMethod = new ConcurrentHashMap<>();

    private final Map<String, SlotJob> byId = new ConcurrentSkipListMap<>();

    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    private volatile MissedSlots defaultPolicy = MissedSlots.RUN_LATEST;

    private volatile int defaultMaxCatchUp = DEFAULT_MAX_CATCH_UP;

    private volatile @Nullable TaskScheduler defaultScheduler;

    SlotJobs(BeanFactory beanFactory, Supplier<Elections> elections) {
        this.beanFactory = beanFactory;
        this.elections = elections;
    }

    /** Returns the slot that the calling thread's once-per-slot run is doing, if any. */
    public static Optional<Slot> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    static <T> T withSlot(Slot slot, Callable<T> work) throws Exception {
        Slot outer = CURRENT.get();
        CURRENT.set(slot);
        try {
            return work.call();
        } finally {
            if (outer == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(outer);
            }
        }
    }

    /**
     * Sets what jobs that do not say otherwise do with missed slots.
     *
     * @param policy {@link MissedSlots#RUN_LATEST}, {@link MissedSlots#SKIP} or {@link
     *     MissedSlots#RUN_ALL}
     * @param maxCatchUp the most missed slots {@link MissedSlots#RUN_ALL} runs, at least 1
     */
    public void setDefaults(MissedSlots policy, int maxCatchUp) {
        if (policy == MissedSlots.DEFAULT) {
            throw new IllegalArgumentException(
                    "redlease: the default for missed slots must be RUN_LATEST, SKIP or RUN_ALL");
        }
        if (maxCatchUp < 1) {
            throw new IllegalArgumentException(
                    "redlease: the default maximum of slots to catch up must be at least 1, was "
                            + maxCatchUp);
        }
        this.defaultPolicy = policy;
        this.defaultMaxCatchUp = maxCatchUp;
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
                catchUp(id);
            }
        };
    }

    /** Returns the ids of the jobs. */
    public List<String> jobIds() {
        return List.copyOf(byId.keySet());
    }

    /**
     * Returns each job with its ledger as Redis has it now (one round trip per job), or without the
     * ledger if Redis cannot be read.
     */
    public List<JobView> jobs() {
        List<JobView> views = new ArrayList<>();
        for (SlotJob job : byId.values()) {
            SlotLedger.State state;
            try {
                state = job.ledger().read();
            } catch (RuntimeException ex) {
                state = null;
            }
            Instant now = job.clock().instant();
            views.add(
                    new JobView(
                            job.id,
                            job.electionId,
                            job.trigger.toString(),
                            policy(job),
                            maxCatchUp(job),
                            state == null ? null : state.completedSlot(),
                            state == null ? null : state.completedAt(),
                            state == null ? null : job.trigger.next(state, now)));
        }
        return views;
    }

    /**
     * Returns how long the slot after a job's completed one has been due, in seconds, as known from
     * its last run; NaN when this instance does not lead the job's election.
     */
    public double lagSeconds(String jobId) {
        SlotJob job = byId.get(jobId);
        if (job == null || leading(job.electionId) == null) {
            return Double.NaN;
        }
        return job.lag().toNanos() / 1e9;
    }

    // For the post-processor, the interceptor and the jobs.

    void register(Object target, String methodName, SlotJob job) {
        byMethod.put(new JobKey(target, methodName), job);
        byId.put(job.id, job);
    }

    @Nullable SlotJob find(@Nullable Object target, String methodName) {
        return target == null ? null : byMethod.get(new JobKey(target, methodName));
    }

    MissedSlots policy(SlotJob job) {
        return job.policy == MissedSlots.DEFAULT ? defaultPolicy : job.policy;
    }

    int maxCatchUp(SlotJob job) {
        return job.maxCatchUp == 0 ? defaultMaxCatchUp : job.maxCatchUp;
    }

    Elector elector(String electionId) {
        return elections.get().get(electionId);
    }

    /** Returns the election's active term on this instance, or null. */
    @Nullable Term leading(String electionId) {
        return elector(electionId).term().filter(Term::isActive).orElse(null);
    }

    @Nullable TaskScheduler scheduler(String name) {
        if (!name.isEmpty()) {
            return beanFactory.getBean(name, TaskScheduler.class);
        }
        TaskScheduler scheduler = defaultScheduler;
        if (scheduler == null) {
            scheduler = beanFactory.getBeanProvider(TaskScheduler.class).getIfUnique();
            if (scheduler == null && beanFactory.containsBean("taskScheduler")) {
                scheduler = beanFactory.getBean("taskScheduler", TaskScheduler.class);
            }
            defaultScheduler = scheduler;
        }
        return scheduler;
    }

    Clock clock(String schedulerName) {
        TaskScheduler scheduler = scheduler(schedulerName);
        return scheduler != null ? scheduler.getClock() : Clock.systemDefaultZone();
    }

    private void catchUp(String electionId) {
        for (SlotJob job : byId.values()) {
            if (!job.electionId.equals(electionId)) {
                continue;
            }
            TaskScheduler scheduler = scheduler(job.schedulerName);
            if (scheduler == null) {
                logger.debug(
                        "redlease: no TaskScheduler bean; job "
                                + job.id
                                + " catches up at its tick");
                continue;
            }
            scheduler.schedule(job::runDue, scheduler.getClock().instant());
        }
    }

    void record(SlotJob job, Instant slot, Result result) {
        if (result != Result.SKIPPED && logger.isDebugEnabled()) {
            logger.debug("redlease: once-per-slot job " + job.id + " slot " + slot + ": " + result);
        }
        notify(job, slot, result, 1);
    }

    void recordMissed(SlotJob job, Instant slot, long count) {
        logger.warn(
                "redlease: once-per-slot job "
                        + job.id
                        + " drops "
                        + count
                        + " missed slot(s) up to "
                        + slot
                        + " (missedSlots "
                        + policy(job)
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

    /** Hears about every job's runs, skipped ticks and missed slots. */
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
        /** A tick ran its slot and marked it complete. */
        RUN("run"),
        /** A tick came for a slot that had completed, or was not due yet, and ran nothing. */
        SKIPPED("skipped"),
        /** A slot that no tick ran on time was run and marked complete. */
        CAUGHT_UP("caught-up"),
        /** A missed slot was dropped, as {@link MissedSlots} says. */
        MISSED("missed"),
        /** The run threw, or its term was over before the slot could be marked. */
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
     */
    public record JobView(
            String job,
            String election,
            String trigger,
            MissedSlots missedSlots,
            int maxCatchUp,
            @Nullable Instant lastCompletedSlot,
            @Nullable Instant lastCompletion,
            @Nullable Instant nextDueSlot) {}

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
