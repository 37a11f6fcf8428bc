package io.redlease.core;

import io.redlease.core.partition.PartitionedElection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The electors of an application by election id: the one {@code @LeaderOnly} and {@link
 * LeadershipContext} use to find the election a piece of work belongs to.
 *
 * <p>The id {@value #DEFAULT} (or an empty id) is the application's main election; other ids name
 * extra elections. Ids are local names chosen by the application; the election {@link
 * Elector#name() name} is what instances share in Redis. Partitioned elections have ids of their
 * own, apart from the elections' ({@link #partitioned(String)}).
 */
public final class Elections {

    /** The id of the main election, used when no id is given. */
    public static final String DEFAULT = "default";

    /**
     * The key under which health details and the actuator endpoint's root list the partitioned
     * elections, beside the elections by id; Spring Boot refuses it as an election id.
     */
    public static final String PARTITIONS = "partitions";

    private final Map<String, Elector> electors;

    private final Map<String, PartitionedElection> partitioned;

    /** Why leader election is off, for a disabled registry; null for an enabled one. */
    private final @Nullable String disabledReason;

    /** The instance id a disabled registry reports. */
    private final @Nullable String disabledInstanceId;

    private Elections(Map<String, Elector> electors, Map<String, PartitionedElection> partitioned) {
        this.electors = Collections.unmodifiableMap(new LinkedHashMap<>(electors));
        this.partitioned = Collections.unmodifiableMap(new LinkedHashMap<>(partitioned));
        this.disabledReason = null;
        this.disabledInstanceId = null;
    }

    private Elections(String disabledReason, String instanceId) {
        this.electors = Map.of();
        this.partitioned = Map.of();
        this.disabledReason = disabledReason;
        this.disabledInstanceId = instanceId;
    }

    /**
     * Creates a registry.
     *
     * @param electors the electors by id, in a stable order; may contain {@value #DEFAULT}
     * @return the registry
     */
    public static Elections of(Map<String, Elector> electors) {
        return of(electors, Map.of());
    }

    /**
     * Creates a registry of elections and partitioned elections.
     *
     * @param electors the electors by id, in a stable order; may contain {@value #DEFAULT}
     * @param partitioned the partitioned elections by id, in a stable order
     * @return the registry
     */
    public static Elections of(
            Map<String, Elector> electors, Map<String, PartitionedElection> partitioned) {
        electors.forEach(
                (id, elector) -> {
                    if (id == null || id.isBlank() || elector == null) {
                        throw new IllegalArgumentException(
                                "redlease: election ids must not be blank and electors not null");
                    }
                });
        partitioned.forEach(
                (id, election) -> {
                    if (id == null || id.isBlank() || election == null) {
                        throw new IllegalArgumentException(
                                "redlease: partitioned election ids must not be blank and"
                                        + " elections not null");
                    }
                });
        return new Elections(electors, partitioned);
    }

    /** Creates a registry holding one elector as the main election. */
    public static Elections of(Elector elector) {
        return of(Map.of(DEFAULT, elector));
    }

    /**
     * Creates the registry of an application whose leader election is switched off: it has no
     * elections, {@link #get} and {@link #partitioned} throw an {@link ElectionDisabledException}
     * with the reason, and a {@link LeadershipContext} over it answers that this instance does not
     * lead (and refuses to hand out a fencer).
     *
     * @param reason why leader election is off and how to turn it on, for the exceptions' messages
     * @param instanceId the id this instance would have in its elections, or null to generate one
     * @return the registry
     */
    public static Elections disabled(String reason, @Nullable String instanceId) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("redlease: the reason must not be blank");
        }
        return new Elections(
                reason,
                instanceId == null || instanceId.isBlank() ? InstanceIds.generate() : instanceId);
    }

    /**
     * Returns whether leader election is on: false for a registry made by {@link #disabled(String,
     * String)}.
     */
    public boolean isEnabled() {
        return disabledReason == null;
    }

    /** Returns the exception that answers for a disabled registry, or null for an enabled one. */
    @Nullable ElectionDisabledException disabledException(String what) {
        String reason = disabledReason;
        return reason == null ? null : new ElectionDisabledException(what, reason);
    }

    /** Returns the instance id of a disabled registry, or null for an enabled one. */
    @Nullable String disabledInstanceId() {
        return disabledInstanceId;
    }

    /**
     * Returns the elector of an election.
     *
     * @param id the election id; empty or null means {@value #DEFAULT}
     * @throws UnknownElectionException if there is no such election
     * @throws ElectionDisabledException if leader election is off ({@link #disabled(String,
     *     String)})
     */
    public Elector get(@Nullable String id) {
        String key = normalize(id);
        ElectionDisabledException disabled =
                disabledException("no elector for election '" + key + "'");
        if (disabled != null) {
            throw disabled;
        }
        Elector elector = electors.get(key);
        if (elector == null) {
            throw new UnknownElectionException(key, electors.keySet());
        }
        return elector;
    }

    /** Returns the elector of an election, or empty when there is none. */
    public Optional<Elector> find(@Nullable String id) {
        return Optional.ofNullable(electors.get(normalize(id)));
    }

    /** Returns the election ids, in registration order. */
    public Set<String> ids() {
        return electors.keySet();
    }

    /** Returns the electors by id, in registration order. */
    public Map<String, Elector> asMap() {
        return electors;
    }

    /**
     * Returns a partitioned election.
     *
     * @param id the partitioned election's id
     * @throws UnknownElectionException if there is no such partitioned election
     * @throws ElectionDisabledException if leader election is off ({@link #disabled(String,
     *     String)})
     */
    public PartitionedElection partitioned(@Nullable String id) {
        ElectionDisabledException disabled =
                disabledException("no partitioned election '" + id + "'");
        if (disabled != null) {
            throw disabled;
        }
        PartitionedElection election = id == null ? null : partitioned.get(id);
        if (election == null) {
            throw new UnknownElectionException(
                    "partitioned election", String.valueOf(id), partitioned.keySet());
        }
        return election;
    }

    /** Returns the partitioned elections by id, in registration order. */
    public Map<String, PartitionedElection> partitionedAsMap() {
        return partitioned;
    }

    /**
     * Returns the partition a term belongs to, when it is a term of one of the partitioned
     * elections.
     */
    OptionalInt partitionOf(Term term) {
        for (PartitionedElection election : partitioned.values()) {
            OptionalInt partition = election.partitionOf(term.elector());
            if (partition.isPresent()) {
                return partition;
            }
        }
        return OptionalInt.empty();
    }

    static String normalize(@Nullable String id) {
        return id == null || id.isEmpty() ? DEFAULT : id;
    }

    @Override
    public String toString() {
        if (disabledReason != null) {
            return "Elections[disabled]";
        }
        return "Elections"
                + electors.keySet()
                + (partitioned.isEmpty() ? "" : partitioned.keySet());
    }
}
