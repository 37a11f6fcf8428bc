package io.redlease.boot.actuate;

import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.partition.PartitionHolder;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotJobControls;
import io.redlease.core.scheduling.SlotJobs;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code redlease} actuator endpoint: each election's role, token, current holder, lease time
 * left, once-per-slot jobs with their last completed and next due slots, and leader-only lifecycles
 * with whether each runs (read), and resignation (write). Each partitioned election is at {@code
 * redlease/partitions/<id>}: its members, this instance's owned partitions and share, and for each
 * partition its holder and newest token as Redis has them.
 *
 * <p>The root ({@code redlease}) maps each election id to its state, as it always has; when
 * partitioned elections are configured, it also has the key {@code partitions} (an id no election
 * may have), mapping each partitioned election id to a summary: name, partition count, members and
 * the partitions owned here. It reads no partition holders; the per-id path does.
 *
 * <p>Operators control once-per-slot jobs at {@code redlease/jobs/<job>} (write): {@code run} runs
 * the job's current slot now on the leader, recorded in the ledger as a run of that slot; {@code
 * pause} and {@code resume} stop and restart the job on every instance. See {@link #job}.
 *
 * <p>Its default access is read-only: resigning and controlling jobs need {@code
 * management.endpoint.redlease.access=unrestricted}, and like every endpoint but health it is not
 * exposed over HTTP unless listed in {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "redlease", defaultAccess = Access.READ_ONLY)
public class RedleaseEndpoint {

    /** The reason of a request whose partition the job does not have (an HTTP 400). */
    private static final String INVALID_PARTITION = "Invalid partition";

    /** The path segment of the job controls: {@code redlease/jobs/<job>}. */
    static final String JOBS = "jobs";

    private final Elections elections;

    private final @Nullable SlotJobs slotJobs;

    private @Nullable LeaderLifecycles lifecycles;

    /**
     * Creates the endpoint.
     *
     * @param elections the application's elections
     */
    public RedleaseEndpoint(Elections elections) {
        this(elections, null);
    }

    /**
     * Creates the endpoint.
     *
     * @param elections the application's elections
     * @param slotJobs the once-per-slot jobs, or null
     */
    public RedleaseEndpoint(Elections elections, @Nullable SlotJobs slotJobs) {
        this.elections = elections;
        this.slotJobs = slotJobs;
    }

    /**
     * Creates the endpoint.
     *
     * @param elections the application's elections
     * @param slotJobs the once-per-slot jobs, or null
     * @param lifecycles the leader-only lifecycles, or null
     */
    public RedleaseEndpoint(
            Elections elections,
            @Nullable SlotJobs slotJobs,
            @Nullable LeaderLifecycles lifecycles) {
        this(elections, slotJobs);
        this.lifecycles = lifecycles;
    }

    /**
     * Returns every election's state by election id and, under {@code partitions} when there are
     * any, a summary of each partitioned election by id.
     */
    @ReadOperation
    public Map<String, Object> root() {
        Map<String, Object> result = new LinkedHashMap<>(elections());
        Map<String, PartitionsSummary> partitioned = new LinkedHashMap<>();
        elections
                .partitionedAsMap()
                .forEach(
                        (id, election) ->
                                partitioned.put(
                                        id,
                                        new PartitionsSummary(
                                                election.name(),
                                                election.partitionCount(),
                                                election.members(),
                                                List.copyOf(election.owned()))));
        if (!partitioned.isEmpty()) {
            result.put(Elections.PARTITIONS, partitioned);
        }
        return result;
    }

    /** Returns every election's state, by election id (the root without the partitions). */
    public Map<String, ElectionDescriptor> elections() {
        Map<String, ElectionDescriptor> result = new LinkedHashMap<>();
        List<SlotJobs.JobView> jobs = jobs();
        elections
                .asMap()
                .forEach(
                        (id, elector) ->
                                result.put(id, withLifecycles(id, describe(id, elector, jobs))));
        return result;
    }

    /**
     * Returns one election's state.
     *
     * @param id the election id
     * @return the state, or {@code null} (HTTP 404) when no election has that id
     */
    @ReadOperation
    public @Nullable ElectionDescriptor election(@Selector String id) {
        List<SlotJobs.JobView> jobs = jobs();
        return elections
                .find(id)
                .map(elector -> describe(id.isEmpty() ? Elections.DEFAULT : id, elector, jobs))
                .map(found -> withLifecycles(id.isEmpty() ? Elections.DEFAULT : id, found))
                .orElse(null);
    }

    /**
     * Returns a partitioned election's assignment across instances, read from Redis ({@code
     * redlease/partitions/<id>}; two round trips per partition).
     *
     * @param kind {@code partitions}
     * @param id the partitioned election's id
     * @return the assignment, or {@code null} (HTTP 404) when there is no such partitioned election
     */
    @ReadOperation
    public @Nullable PartitionsDescriptor partitions(@Selector String kind, @Selector String id) {
        PartitionedElection election =
                Elections.PARTITIONS.equals(kind) ? elections.partitionedAsMap().get(id) : null;
        if (election == null) {
            return null;
        }
        List<PartitionHolder> holders = List.of();
        String error = null;
        try {
            holders = election.holders();
        } catch (RuntimeException ex) {
            error = ex.getClass().getSimpleName();
        }
        return new PartitionsDescriptor(
                election.name(),
                election.instanceId(),
                election.isRunning(),
                election.partitionCount(),
                List.copyOf(election.owned()),
                election.share(),
                election.members(),
                holders,
                error);
    }

    /**
     * A partitioned election as the endpoint's root lists it.
     *
     * @param name the name shared in Redis
     * @param partitions the partition count
     * @param members the live members as this instance last counted them
     * @param owned the partitions this instance holds
     */
    public record PartitionsSummary(
            String name, int partitions, List<String> members, List<Integer> owned) {}

    /**
     * A partitioned election's assignment.
     *
     * @param name the name shared in Redis
     * @param instanceId this instance's id
     * @param running whether this instance takes part
     * @param partitions the partition count
     * @param owned the partitions this instance holds
     * @param share this instance's fair share (-1 before its first balancing round)
     * @param members the live members as this instance last counted them
     * @param holders each partition's holder and newest token, as Redis has them
     * @param holdersError why the holders could not be read, if they could not
     */
    public record PartitionsDescriptor(
            String name,
            String instanceId,
            boolean running,
            int partitions,
            List<Integer> owned,
            int share,
            List<String> members,
            List<PartitionHolder> holders,
            @Nullable String holdersError) {}

    /**
     * Makes this instance resign its term of an election, so another instance takes over.
     *
     * @param election the election id; the main election when absent
     * @return the election's state after the request (the hand-over completes shortly after)
     * @throws InvalidEndpointRequestException (HTTP 400) when no election has that id
     */
    @WriteOperation
    public ElectionDescriptor resign(@Nullable String election) {
        Elector elector =
                elections
                        .find(election)
                        .orElseThrow(
                                () ->
                                        new InvalidEndpointRequestException(
                                                "redlease: no election '"
                                                        + election
                                                        + "'; configured: "
                                                        + elections.ids(),
                                                "No such election"));
        elector.resign();
        String id = election == null || election.isEmpty() ? Elections.DEFAULT : election;
        return withLifecycles(id, describe(id, elector, jobs()));
    }

    /**
     * Controls a once-per-slot job ({@code POST redlease/jobs/<job>} with a JSON body {@code
     * {"action": "run"}}, {@code "pause"} or {@code "resume"}):
     *
     * <ul>
     *   <li>{@code run}: runs the job's current slot now, on this instance, which must lead the
     *       job's election; the answer comes once the run has ended. The slot is claimed and marked
     *       in the ledger with the term's token exactly as a scheduled run of it would be, so no
     *       instance runs it again. For a job of a partitioned election, {@code partition} names
     *       the partition, which this instance must hold.
     *   <li>{@code pause}: pauses the job on every instance (its ledger in Redis says so); the
     *       slots that come due while it is paused are not run, and are not caught up after it is
     *       resumed. A run in progress ends as it would.
     *   <li>{@code resume}: resumes it; the slots after now run as scheduled.
     * </ul>
     *
     * A refusal is an answer, not an error: {@code outcome} is {@code refused} and {@code refusal}
     * says why: {@code not leading} (with the {@code holder}, if Redis answered), {@code paused},
     * or {@code not scheduled}.
     *
     * @param kind {@code jobs}
     * @param job the job's id, as the read operations show it (bean name and method name)
     * @param action {@code run}, {@code pause} or {@code resume}
     * @param partition for {@code run} of a partitioned election's job, the partition
     * @return what the control did
     * @throws InvalidEndpointRequestException (HTTP 400) for an unknown job (reason {@code unknown
     *     job}), an unknown action, or a partition missing, out of range or not applicable
     */
    @WriteOperation
    public JobControlDescriptor job(
            @Selector String kind,
            @Selector String job,
            String action,
            @Nullable Integer partition) {
        if (!JOBS.equals(kind)) {
            throw new InvalidEndpointRequestException(
                    "redlease: no write operation at redlease/"
                            + kind
                            + "; use redlease/jobs/<job>",
                    "No such operation");
        }
        SlotJobs jobs = slotJobs;
        if (jobs == null || !jobs.jobIds().contains(job)) {
            throw new InvalidEndpointRequestException(
                    "redlease: unknown job '"
                            + job
                            + "'; once-per-slot jobs: "
                            + (jobs == null ? List.of() : jobs.jobIds()),
                    SlotJobControls.Refusal.UNKNOWN_JOB.value());
        }
        SlotJobControls.Control control =
                switch (action == null ? "" : action) {
                    case "run" -> run(jobs, job, partition);
                    case "pause" -> jobs.controls().pause(job);
                    case "resume" -> jobs.controls().resume(job);
                    default ->
                            throw new InvalidEndpointRequestException(
                                    "redlease: action must be run, pause or resume, was '"
                                            + action
                                            + "'",
                                    "Invalid action");
                };
        if (control.refusal() == SlotJobControls.Refusal.UNKNOWN_JOB) {
            throw new InvalidEndpointRequestException(
                    "redlease: unknown job '" + job + "'",
                    SlotJobControls.Refusal.UNKNOWN_JOB.value());
        }
        Instant pausedAt =
                jobs.controls()
                        .pauseState(job)
                        .map(SlotJobControls.PauseState::pausedAt)
                        .orElse(null);
        return new JobControlDescriptor(
                control.job(),
                control.partition(),
                action,
                control.outcome().value(),
                control.refusal() == null ? null : control.refusal().value(),
                control.slot(),
                control.holder(),
                control.changed(),
                pausedAt != null,
                pausedAt);
    }

    private static SlotJobControls.Control run(
            SlotJobs jobs, String job, @Nullable Integer partition) {
        CompletableFuture<SlotJobControls.Control> running;
        try {
            running = jobs.controls().runNow(job, partition);
        } catch (IllegalArgumentException ex) {
            // The message is the job's own ("redlease: ..."), naming the partition rule.
            throw new InvalidEndpointRequestException(
                    String.valueOf(ex.getMessage()), INVALID_PARTITION);
        }
        try {
            return running.get();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(
                    "redlease: interrupted while job " + job + " ran; it runs on", ex);
        } catch (ExecutionException ex) {
            throw new IllegalStateException(
                    "redlease: job " + job + " could not run now", ex.getCause());
        }
    }

    /**
     * What an operator's control of a job did.
     *
     * @param job the job's id
     * @param partition the partition a run was for, if the job is a partitioned election's
     * @param action {@code run}, {@code pause} or {@code resume}
     * @param outcome {@code completed} or {@code failed} (run: the slot ran and is marked, or ran
     *     and is not), {@code paused}, {@code resumed}, or {@code refused}
     * @param refusal when refused: {@code not leading}, {@code paused} or {@code not scheduled}
     * @param slot the slot a run ran
     * @param holder when refused as not leading, the instance that leads, if Redis answered
     * @param changed for a run, whether it ran; for pause and resume, whether the state changed
     *     (false: it was paused, or running, already)
     * @param paused whether the job is paused now, as this instance read it
     * @param pausedAt since when, if it is
     */
    public record JobControlDescriptor(
            String job,
            @Nullable Integer partition,
            String action,
            String outcome,
            @Nullable String refusal,
            @Nullable Instant slot,
            @Nullable String holder,
            boolean changed,
            boolean paused,
            @Nullable Instant pausedAt) {}

    private ElectionDescriptor withLifecycles(String id, ElectionDescriptor election) {
        LeaderLifecycles lifecycles = this.lifecycles;
        List<LeaderLifecycles.Member> members =
                lifecycles == null ? null : lifecycles.members().get(id);
        if (members == null) {
            return election;
        }
        return new ElectionDescriptor(
                election.name(),
                election.instanceId(),
                election.role(),
                election.token(),
                election.holder(),
                election.leaseMillisLeft(),
                election.holderError(),
                election.jobs(),
                election.leader(),
                members.stream()
                        .map(m -> new LifecycleDescriptor(m.name(), m.phase(), m.running()))
                        .toList());
    }

    private List<SlotJobs.JobView> jobs() {
        return slotJobs == null ? List.of() : slotJobs.jobs();
    }

    private static ElectionDescriptor describe(
            String id, Elector elector, List<SlotJobs.JobView> jobs) {
        Elector.LeaseHolder holder = null;
        String error = null;
        try {
            holder = elector.holder().orElse(null);
        } catch (RuntimeException ex) {
            error = ex.getClass().getSimpleName();
        }
        Duration remaining = holder == null ? null : holder.remaining();
        return new ElectionDescriptor(
                elector.name(),
                elector.instanceId(),
                RedleaseHealthIndicator.role(elector),
                elector.token().isPresent() ? elector.token().getAsLong() : null,
                holder == null ? null : holder.instanceId(),
                remaining == null ? null : remaining.toMillis(),
                error,
                jobs.stream()
                        .filter(job -> job.election().equals(id))
                        .map(
                                job ->
                                        new JobDescriptor(
                                                job.job(),
                                                job.trigger(),
                                                job.missedSlots().name(),
                                                job.lastCompletedSlot(),
                                                job.lastCompletion(),
                                                job.nextDueSlot(),
                                                job.pausedAt() != null,
                                                job.pausedAt()))
                        .toList(),
                leader(elector),
                List.of());
    }

    /** Returns the leader's advertised metadata, when it advertised any and Redis answers. */
    private static @Nullable LeaderDescriptor leader(Elector elector) {
        try {
            return elector.leaderInfo()
                    .flatMap(
                            info ->
                                    info.metadata()
                                            .map(
                                                    metadata ->
                                                            new LeaderDescriptor(
                                                                    info.instanceId(),
                                                                    metadata.url(),
                                                                    metadata.version(),
                                                                    metadata.attributes())))
                    .orElse(null);
        } catch (RuntimeException ex) {
            return null;
        }
    }

    /**
     * One election's state.
     *
     * @param name the election name
     * @param instanceId this instance's id
     * @param role {@code leader}, {@code follower}, {@code stopped}, or {@code starting} until the
     *     election's first outcome
     * @param token this instance's token, when leading
     * @param holder the instance id that holds the lease in Redis, if any
     * @param leaseMillisLeft the lease's remaining time in milliseconds, if held with an expiry
     * @param holderError why the holder could not be read, if it could not
     * @param jobs the election's once-per-slot jobs
     * @param leader what the holder advertised about itself, if discovery is on and it did
     * @param lifecycles the election's leader-only lifecycle beans and listener containers
     */
    public record ElectionDescriptor(
            String name,
            String instanceId,
            String role,
            @Nullable Long token,
            @Nullable String holder,
            @Nullable Long leaseMillisLeft,
            @Nullable String holderError,
            List<JobDescriptor> jobs,
            @Nullable LeaderDescriptor leader,
            List<LifecycleDescriptor> lifecycles) {}

    /**
     * What the leader advertised about itself (leader discovery).
     *
     * @param instanceId the leader's instance id
     * @param url the URL it is reached at, if advertised
     * @param version its version, if advertised
     * @param attributes its attributes
     */
    public record LeaderDescriptor(
            String instanceId,
            @Nullable String url,
            @Nullable String version,
            Map<String, String> attributes) {}

    /**
     * A leader-only lifecycle bean or listener container of an election.
     *
     * @param name the bean name or listener id
     * @param phase the phase it starts in
     * @param running whether it runs now
     */
    public record LifecycleDescriptor(String name, int phase, boolean running) {}

    /**
     * A once-per-slot job, with its ledger as Redis has it.
     *
     * @param job the job's id (bean name and method name)
     * @param trigger the job's {@code @Scheduled} trigger
     * @param missedSlots what the job does with missed slots
     * @param lastCompletedSlot the latest completed slot, if any (or if Redis could be read)
     * @param lastCompletion when that slot's run completed
     * @param nextDueSlot the slot after the completed one
     * @param paused whether an operator paused the job (on every instance)
     * @param pausedAt since when, if it is paused
     */
    public record JobDescriptor(
            String job,
            String trigger,
            String missedSlots,
            @Nullable Instant lastCompletedSlot,
            @Nullable Instant lastCompletion,
            @Nullable Instant nextDueSlot,
            boolean paused,
            @Nullable Instant pausedAt) {}
}
