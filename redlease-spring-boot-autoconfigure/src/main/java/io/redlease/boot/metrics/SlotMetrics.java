package io.redlease.boot.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlease.core.scheduling.SlotJobs;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Micrometer meters for once-per-slot jobs ({@code @LeaderOnly(oncePerSlot = true)}), tagged
 * {@value #TAG_JOB} (the bean name and method name):
 *
 * <ul>
 *   <li>{@value #SLOTS}: counter of slot outcomes, tag {@value #TAG_RESULT} (run, skipped,
 *       caught-up, missed, paused, failed);
 *   <li>{@value #LAG}: gauge, in seconds, of how long the slot after the completed one has been
 *       due, on the instance that leads the job's election (NaN elsewhere; 0 while paused);
 *   <li>{@value #PAUSED}: gauge, 1 while an operator has the job paused (on every instance), 0
 *       while it runs, as this instance last read the job's ledger (NaN if it never could).
 * </ul>
 */
public final class SlotMetrics implements MeterBinder {

    /** Counter: slot outcomes, by result. */
    public static final String SLOTS = "redlease.slots";

    /** Gauge: seconds the next slot has been due without completing. */
    public static final String LAG = "redlease.slot.lag";

    /** Gauge: 1 while the job is paused, 0 while it runs. */
    public static final String PAUSED = "redlease.slot.paused";

    /**
     * Tag: the job's id ({@code bean.method}). Not {@code job}, which Prometheus reserves for the
     * scrape job.
     */
    public static final String TAG_JOB = "redlease.job";

    /** Tag: the outcome of a slot. */
    public static final String TAG_RESULT = "result";

    private final SlotJobs jobs;

    private final Set<String> bound = ConcurrentHashMap.newKeySet();

    /**
     * Creates the meters of the application's jobs.
     *
     * @param jobs the once-per-slot jobs
     */
    public SlotMetrics(SlotJobs jobs) {
        this.jobs = jobs;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String job : jobs.jobIds()) {
            bind(registry, job);
        }
        jobs.addListener(
                (job, slot, result, count) -> {
                    bind(registry, job);
                    counter(registry, job, result).increment(count);
                });
    }

    private void bind(MeterRegistry registry, String job) {
        if (!bound.add(job + "@" + System.identityHashCode(registry))) {
            return;
        }
        for (SlotJobs.Result result : SlotJobs.Result.values()) {
            counter(registry, job, result);
        }
        Gauge.builder(LAG, jobs, j -> j.lagSeconds(job))
                .tag(TAG_JOB, job)
                .baseUnit("seconds")
                .description("How long the slot after the job's completed one has been due")
                .register(registry);
        Gauge.builder(PAUSED, jobs, j -> paused(j, job))
                .tag(TAG_JOB, job)
                .description("Whether an operator has paused the job, on every instance")
                .register(registry);
    }

    private static double paused(SlotJobs jobs, String job) {
        return jobs.controls()
                .pauseState(job)
                .map(state -> state.paused() ? 1.0 : 0.0)
                .orElse(Double.NaN);
    }

    private static Counter counter(MeterRegistry registry, String job, SlotJobs.Result result) {
        return Counter.builder(SLOTS)
                .tag(TAG_JOB, job)
                .tag(TAG_RESULT, result.tag())
                .description("Once-per-slot job outcomes")
                .register(registry);
    }
}
