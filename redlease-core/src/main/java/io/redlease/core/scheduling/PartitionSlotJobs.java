package io.redlease.core.scheduling;

import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A once-per-slot job of a partitioned election ({@code @LeaderOnly(partitions = ..., oncePerSlot =
 * true)}), scheduled: one {@link SlotJob} per partition, each with its own {@link SlotSchedule} on
 * the scheduler Spring chose, and its own ledger beside the partition's keys ({@code
 * {<name>:p<i>}:slots:<job>}, so under Redis Cluster it shares the partition's slot). Each
 * partition's job runs and marks its slots only inside that partition's active term, and applies
 * the missed-slots policy to that partition's ledger, exactly as a job of one election does; so a
 * partition handed over or taken after a lapse catches up its own missed slots on its new holder.
 * Spring keeps this object as the method's future: cancelling it ends every partition's schedule.
 */
final class PartitionSlotJobs implements ScheduledFuture<Object> {

    private final List<SlotJob> jobs;

    private final List<SlotSchedule> schedules;

    private PartitionSlotJobs(List<SlotJob> jobs, List<SlotSchedule> schedules) {
        this.jobs = jobs;
        this.schedules = schedules;
    }

    /**
     * Starts a partitioned template's job in every partition of its election.
     *
     * @param schedule makes the schedule of one partition's job, on the scheduler Spring chose
     */
    static PartitionSlotJobs start(
            SlotJob template,
            PartitionedElection election,
            Function<SlotJob, SlotSchedule> schedule) {
        synchronized (template) {
            if (template.partitionJobs != null) {
                throw new IllegalStateException(
                        "redlease: once-per-slot job " + template.id + " is scheduled twice");
            }
            List<SlotJob> jobs = new ArrayList<>();
            List<SlotSchedule> schedules = new ArrayList<>();
            for (int partition = 0; partition < election.partitionCount(); partition++) {
                SlotJob job = template.forPartition(partition);
                template.applyWonBeforeScheduling(partition, job);
                jobs.add(job);
                schedules.add(schedule.apply(job));
            }
            PartitionSlotJobs started = new PartitionSlotJobs(List.copyOf(jobs), schedules);
            template.partitionJobs = started;
            for (int partition = 0; partition < jobs.size(); partition++) {
                jobs.get(partition).start(schedules.get(partition));
            }
            return started;
        }
    }

    /** Returns a listener that has the partitioned election's jobs catch up on assignment. */
    static PartitionListener catchUp(Collection<SlotJob> templates, String partitionsId) {
        return new PartitionListener() {
            @Override
            public void onAssigned(int partition, long token) {
                for (SlotJob template : templates) {
                    if (!template.partitions().equals(partitionsId)) {
                        continue;
                    }
                    PartitionSlotJobs started;
                    synchronized (template) {
                        started = template.partitionJobs;
                        if (started == null) {
                            // Won before Spring scheduled the job: its slots count from now.
                            template.wonBeforeScheduling(
                                    partition, token, template.clock().instant());
                            continue;
                        }
                    }
                    started.assigned(partition, token);
                }
            }
        };
    }

    /** Returns the job of each partition, by partition. */
    List<SlotJob> jobs() {
        return jobs;
    }

    /** Has a partition's job catch up right after this instance won a term of the partition. */
    void assigned(int partition, long token) {
        if (partition < 0 || partition >= jobs.size()) {
            return;
        }
        SlotJob job = jobs.get(partition);
        job.elected(token, job.clock().instant());
        schedules.get(partition).catchUp();
    }

    /** Returns the largest lag of the partitions this instance holds, or NaN when none. */
    double lagSeconds(SlotJobs registry) {
        double lag = Double.NaN;
        for (SlotJob job : jobs) {
            if (registry.leading(job) != null) {
                double seconds = job.lag().toNanos() / 1e9;
                lag = Double.isNaN(lag) ? seconds : Math.max(lag, seconds);
            }
        }
        return lag;
    }

    /** Ends every partition's schedule; see {@link SlotSchedule#cancel(boolean)}. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = false;
        for (SlotSchedule schedule : schedules) {
            cancelled |= schedule.cancel(mayInterruptIfRunning);
        }
        return cancelled;
    }

    @Override
    public boolean isCancelled() {
        return schedules.stream().allMatch(SlotSchedule::isCancelled);
    }

    @Override
    public boolean isDone() {
        return schedules.stream().allMatch(SlotSchedule::isDone);
    }

    @Override
    public Object get() throws InterruptedException, ExecutionException {
        for (SlotSchedule schedule : schedules) {
            schedule.get();
        }
        return this;
    }

    @Override
    public Object get(long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (SlotSchedule schedule : schedules) {
            schedule.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }
        return this;
    }

    /** Returns the delay until the soonest partition's next link. */
    @Override
    public long getDelay(TimeUnit unit) {
        return schedules.stream().mapToLong(s -> s.getDelay(unit)).min().orElse(0);
    }

    @Override
    public int compareTo(Delayed other) {
        return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public String toString() {
        return "PartitionSlotJobs[" + jobs.size() + " partitions]";
    }
}
