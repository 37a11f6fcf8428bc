package io.redlease.core.scheduling;

import io.redlease.core.Elector;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Operators' controls of the application's once-per-slot jobs ({@link SlotJobs#controls()}): run a
 * job's current slot now on the leader, pause and resume a job on every instance (its state kept in
 * the job's ledger in Redis), and read whether it is paused.
 */
public final class SlotJobControls {

    private static final Log logger = LogFactory.getLog("io.redlease.scheduling");

    private final SlotJobs jobs;

    SlotJobControls(SlotJobs jobs) {
        this.jobs = jobs;
    }

    /**
     * Runs a job's current slot now, on the instance that leads the job's election (or partition),
     * for an operator: the oldest slot the leader's term has not handled, due or not (for a fixed
     * delay, now). It runs on the job's scheduler, after any run of the job in progress here, and
     * is claimed and marked in the ledger with the term's token exactly as a scheduled run of that
     * slot would be, so no instance runs that slot again; the schedule goes on from the slot after
     * it. Refused, without running anything, when the job is unknown, this instance does not lead
     * (naming the holder if Redis answers), the job is paused, or it is not scheduled.
     *
     * @param jobId the job's id, as {@link SlotJobs#jobs()} shows it
     * @param partition for a job of a partitioned election, the partition; null otherwise
     * @return what became of it, once the run ended (or at once when refused)
     * @throws IllegalArgumentException when {@code partition} is missing for a partitioned job, out
     *     of range, or given for a job of one election
     */
    public CompletableFuture<Control> runNow(String jobId, @Nullable Integer partition) {
        SlotJob template = jobs.job(jobId);
        if (template == null) {
            return CompletableFuture.completedFuture(unknown(jobId, partition));
        }
        SlotJob job = template;
        if (template.isPartitioned()) {
            int count = jobs.partitioned(template.partitions()).partitionCount();
            if (partition == null || partition < 0 || partition >= count) {
                throw new IllegalArgumentException(
                        "redlease: once-per-slot job "
                                + jobId
                                + " runs in each partition of '"
                                + template.partitions()
                                + "': partition must be 0 to "
                                + (count - 1)
                                + ", was "
                                + partition);
            }
            PartitionSlotJobs parts = template.partitionJobs;
            if (parts == null) {
                return CompletableFuture.completedFuture(
                        new Control(jobId, partition, Outcome.REFUSED, Refusal.NOT_SCHEDULED));
            }
            job = parts.jobs().get(partition);
        } else if (partition != null) {
            throw new IllegalArgumentException(
                    "redlease: once-per-slot job "
                            + jobId
                            + " is not a job of a partitioned election: partition must be absent,"
                            + " was "
                            + partition);
        }
        SlotSchedule schedule = job.schedule();
        if (job.disabled || schedule == null) {
            return CompletableFuture.completedFuture(refused(job, Refusal.NOT_SCHEDULED));
        }
        if (jobs.leading(job) == null) {
            return CompletableFuture.completedFuture(refused(job, Refusal.NOT_LEADING));
        }
        return schedule.runNow();
    }

    /**
     * Pauses a job on every instance: its ledger in Redis says so, and from the next run on, no
     * instance runs its slots (a run in progress ends as it would). For a job of a partitioned
     * election, every partition's. The slots that come due while it is paused are settled and
     * counted as paused: resuming does not catch them up.
     *
     * @param jobId the job's id
     * @return {@link Outcome#PAUSED}, with whether it changed anything, or refused: unknown job
     */
    public Control pause(String jobId) {
        return control(jobId, true);
    }

    /**
     * Resumes a paused job on every instance: slots after now run as scheduled, those before now
     * stay settled.
     *
     * @param jobId the job's id
     * @return {@link Outcome#RESUMED}, with whether it changed anything, or refused: unknown job
     */
    public Control resume(String jobId) {
        return control(jobId, false);
    }

    private Control control(String jobId, boolean pausing) {
        SlotJob template = jobs.job(jobId);
        if (template == null) {
            return unknown(jobId, null);
        }
        boolean changed = false;
        for (SlotJob job : instances(template)) {
            changed |= job.pause(pausing);
        }
        logger.info(
                "redlease: once-per-slot job "
                        + jobId
                        + (pausing ? " paused" : " resumed")
                        + (changed ? "" : " (it was already)")
                        + " by an operator");
        return new Control(
                jobId, null, pausing ? Outcome.PAUSED : Outcome.RESUMED, null, null, null, changed);
    }

    /** Returns the jobs a template runs as: itself, or one per partition. */
    private List<SlotJob> instances(SlotJob template) {
        if (!template.isPartitioned()) {
            return List.of(template);
        }
        PartitionSlotJobs parts = template.partitionJobs;
        if (parts != null) {
            return parts.jobs();
        }
        List<SlotJob> partitions = new ArrayList<>();
        int count = jobs.partitioned(template.partitions()).partitionCount();
        for (int partition = 0; partition < count; partition++) {
            partitions.add(template.forPartition(partition));
        }
        return partitions;
    }

    /**
     * Returns whether a job is paused, as this instance last read its ledger (reading it once if it
     * never has); empty when the job is unknown or its ledger could never be read. For a job of a
     * partitioned election, partition 0's (a pause and a resume write every partition's ledger;
     * every instance reads partition 0's at each of its slots).
     */
    public Optional<PauseState> pauseState(String jobId) {
        SlotJob template = jobs.job(jobId);
        if (template == null) {
            return Optional.empty();
        }
        if (!template.isPartitioned()) {
            return Optional.ofNullable(template.pauseState());
        }
        PartitionSlotJobs parts = template.partitionJobs;
        return parts == null || parts.jobs().isEmpty()
                ? Optional.empty()
                : Optional.ofNullable(parts.jobs().get(0).pauseState());
    }

    /**
     * Returns the ids of the paused jobs of an election, or of a partitioned election, as this
     * instance last read their ledgers.
     *
     * @param id the election id, or the partitioned election id
     * @param partitioned whether {@code id} is a partitioned election's
     */
    public List<String> pausedJobs(String id, boolean partitioned) {
        List<String> paused = new ArrayList<>();
        for (SlotJob job : jobs.all()) {
            String of = job.isPartitioned() ? job.partitions() : job.electionId;
            if (job.isPartitioned() == partitioned
                    && of.equals(id)
                    && pauseState(job.id).filter(PauseState::paused).isPresent()) {
                paused.add(job.id);
            }
        }
        return paused;
    }

    /**
     * Describes a refusal of a job's run-now, naming the holder when this instance does not lead.
     */
    Control refused(SlotJob job, Refusal refusal) {
        String holder = null;
        if (refusal == Refusal.NOT_LEADING) {
            try {
                holder =
                        jobs.elector(job)
                                .holder()
                                .map(Elector.LeaseHolder::instanceId)
                                .orElse(null);
            } catch (RuntimeException ex) {
                holder = null; // Redis did not answer: the holder is not known
            }
        }
        return new Control(
                job.id, job.partitionOrNull(), Outcome.REFUSED, refusal, null, holder, false);
    }

    /** Describes a run-now refused because the job's schedule has ended or never began. */
    Control notScheduled(SlotJob job) {
        return refused(job, Refusal.NOT_SCHEDULED);
    }

    private static Control unknown(String jobId, @Nullable Integer partition) {
        return new Control(jobId, partition, Outcome.REFUSED, Refusal.UNKNOWN_JOB);
    }

    /**
     * Whether a job is paused, as an instance last read its ledger.
     *
     * @param pausedAt when it was paused, while it is; null while it runs
     */
    public record PauseState(@Nullable Instant pausedAt) {

        /** Returns whether the job is paused. */
        public boolean paused() {
            return pausedAt != null;
        }
    }

    /**
     * What an operator's control of a job did: {@link #runNow}, {@link #pause} or {@link #resume}.
     *
     * @param job the job's id
     * @param partition the partition, for a run-now of a partitioned election's job
     * @param outcome what happened
     * @param refusal why nothing happened, when {@code outcome} is {@link Outcome#REFUSED}
     * @param slot the slot a run-now ran
     * @param holder when refused as {@link Refusal#NOT_LEADING}, the instance that holds the lease,
     *     if Redis answered
     * @param changed for a pause or a resume, whether the job's state changed (false: it was
     *     paused, or running, already); for a run-now, whether it ran
     */
    public record Control(
            String job,
            @Nullable Integer partition,
            Outcome outcome,
            @Nullable Refusal refusal,
            @Nullable Instant slot,
            @Nullable String holder,
            boolean changed) {

        Control(String job, @Nullable Integer partition, Outcome outcome, Refusal refusal) {
            this(job, partition, outcome, refusal, null, null, false);
        }
    }

    /** What an operator's control did. */
    public enum Outcome {
        /** Run now: the slot ran and is marked complete. */
        COMPLETED("completed"),
        /**
         * Run now: the slot ran but is not marked (the method threw, its term ended during the run,
         * or the mark was refused); the leader runs it again as {@link MissedSlots} says.
         */
        FAILED("failed"),
        /** Pause: the job is paused. */
        PAUSED("paused"),
        /** Resume: the job runs. */
        RESUMED("resumed"),
        /** Nothing was done: see the {@link Refusal}. */
        REFUSED("refused");

        private final String value;

        Outcome(String value) {
            this.value = value;
        }

        /** Returns the outcome as the endpoint shows it. */
        public String value() {
            return value;
        }
    }

    /** Why an operator's control did nothing. */
    public enum Refusal {
        /** No once-per-slot job has that id. */
        UNKNOWN_JOB("unknown job"),
        /** Run now: this instance does not lead the job's election (or partition). */
        NOT_LEADING("not leading"),
        /** Run now: the job is paused; resume it first. */
        PAUSED("paused"),
        /** Run now: the job has no slots (its cron expression is "-") or is not scheduled yet. */
        NOT_SCHEDULED("not scheduled");

        private final String value;

        Refusal(String value) {
            this.value = value;
        }

        /** Returns the refusal as the endpoint shows it. */
        public String value() {
            return value;
        }
    }
}
