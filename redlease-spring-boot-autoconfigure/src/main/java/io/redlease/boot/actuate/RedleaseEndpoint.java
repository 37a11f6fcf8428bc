package io.redlease.boot.actuate;

import io.redlease.boot.health.RedleaseHealthIndicator;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.partition.PartitionHolder;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotJobs;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * <p>Its default access is read-only: resigning needs {@code
 * management.endpoint.redlease.access=unrestricted}, and like every endpoint but health it is not
 * exposed over HTTP unless listed in {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "redlease", defaultAccess = Access.READ_ONLY)
public class RedleaseEndpoint {

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
                                                job.nextDueSlot()))
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
     * @param role {@code leader}, {@code follower} or {@code stopped}
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
     */
    public record JobDescriptor(
            String job,
            String trigger,
            String missedSlots,
            @Nullable Instant lastCompletedSlot,
            @Nullable Instant lastCompletion,
            @Nullable Instant nextDueSlot) {}
}
