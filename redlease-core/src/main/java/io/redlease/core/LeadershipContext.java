package io.redlease.core;

import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotAccessor;
import io.redlease.core.scheduling.SlotJobs;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Leadership as seen from application code: the current term's fencer and token for an election,
 * whether this instance leads it, and the lever to resign.
 *
 * <p>Inside work bound to a term (a {@code @LeaderOnly} method, {@link Term#execute}), the methods
 * answer for <em>that</em> term, even if it ends during the call: its fencer keeps its token, and
 * its writes are refused once a newer term exists (and, without a call, once the term's local
 * deadline has passed). Elsewhere they answer for the elector's current term while it is
 * {@linkplain Term#isActive() active}: not ended and before its local deadline. {@link #isLeader()}
 * is advisory; act through {@link #fencer()}, whose writes are checked at Redis.
 *
 * <p>An instance answers for the main election; {@link #election(String)} gives one for another.
 * Inside work bound to a partition's term (a {@code @LeaderOnly(partitions = ...)} run), the
 * context created for the main election answers for that partition's term instead, as long as it is
 * the innermost term the thread works for; {@link #partition()} says which partition it is. There
 * {@link #term()}, {@link #fencer()}, {@link #token()}, {@link #isLeader()} and {@link #resign()}
 * concern the partition, while {@link #elector()}, {@link #instanceId()} and {@link #leaderInfo()}
 * still concern the main election. A {@code @LeaderOnly} call of the main election made inside a
 * partition run makes the main term the innermost one again for its duration (and a partitioned
 * call nested in it, its partition's). A context from {@link #election(String)} always answers for
 * its own election.
 *
 * <p>Over a disabled registry ({@link Elections#disabled}) it answers that this instance does not
 * lead: {@link #isLeader()} is false, {@link #term()}, {@link #token()}, {@link #fencer()} and
 * {@link #leaderInfo()} are empty, {@link #resign()} does nothing, and what needs an election
 * ({@link #requireFencer()}, {@link #reactiveFencer()}, {@link #elector()}, {@link
 * #partitions(String)}) throws an {@link ElectionDisabledException} naming why election is off.
 */
public final class LeadershipContext {

    private final Elections elections;

    private final String electionId;

    /** Whether it answers for the term of a partition run the thread is doing. */
    private final boolean followsPartitions;

    /**
     * Creates a context for the main election of the registry (and of partition runs).
     *
     * @param elections the application's elections
     */
    public LeadershipContext(Elections elections) {
        this(elections, Elections.DEFAULT, true);
    }

    private LeadershipContext(Elections elections, String electionId, boolean followsPartitions) {
        this.elections = elections;
        this.electionId = electionId;
        this.followsPartitions = followsPartitions;
    }

    /**
     * Returns the context of another election.
     *
     * @param id the election id
     * @throws UnknownElectionException if there is no such election (any id is accepted while
     *     leader election is disabled)
     */
    public LeadershipContext election(String id) {
        String key = Elections.normalize(id);
        if (elections.isEnabled()) {
            elections.get(key);
        }
        return new LeadershipContext(elections, key, false);
    }

    /**
     * Returns a partitioned election.
     *
     * @param id the partitioned election's id ({@code redlease.partitions.<id>})
     * @throws UnknownElectionException if there is no such partitioned election
     * @throws ElectionDisabledException if leader election is disabled
     */
    public PartitionedElection partitions(String id) {
        return elections.partitioned(id);
    }

    /**
     * Returns the partition whose term is the innermost one the calling thread works for (a {@code
     * LeaderOnly(partitions = ...)} run, or work started in it and carried by context propagation),
     * or empty elsewhere.
     */
    public OptionalInt partition() {
        Term inner = BoundTerms.innermost();
        return inner == null ? OptionalInt.empty() : elections.partitionOf(inner);
    }

    /** Returns the innermost bound term when it is a partition's and this context follows them. */
    private @Nullable Term partitionTerm() {
        if (!followsPartitions || elections.partitionedAsMap().isEmpty()) {
            return null;
        }
        Term inner = BoundTerms.innermost();
        return inner != null && elections.partitionOf(inner).isPresent() ? inner : null;
    }

    /**
     * Returns the elector of this context's election: the main one also inside a partition run (the
     * partition's is {@code partitions(id).elector(partition)}).
     *
     * @throws ElectionDisabledException if leader election is disabled
     */
    public Elector elector() {
        return elections.get(electionId);
    }

    /**
     * Returns the term bound to the calling thread (even if it has ended), else the elector's
     * current term while it is {@linkplain Term#isActive() active}.
     */
    public Optional<Term> term() {
        if (!elections.isEnabled()) {
            return Optional.empty();
        }
        Term partition = partitionTerm();
        if (partition != null) {
            return Optional.of(partition);
        }
        Elector elector = elector();
        Term bound = BoundTerms.of(elector);
        return bound != null ? Optional.of(bound) : elector.term();
    }

    /**
     * Returns the term bound to the calling thread only: the term of the enclosing {@code
     * LeaderOnly} method, leader task or {@link Term#execute} call, or empty outside them (even
     * while this instance leads). For resources that must be written from within a term, such as
     * fenced database transactions.
     */
    public Optional<Term> boundTerm() {
        if (!elections.isEnabled()) {
            return Optional.empty();
        }
        Term partition = partitionTerm();
        return partition != null ? Optional.of(partition) : elector().boundTerm();
    }

    /**
     * Returns the slot that the calling thread's once-per-slot run is doing ({@code
     * LeaderOnly(oncePerSlot = true)}), or empty elsewhere.
     */
    public Optional<Slot> slot() {
        return SlotJobs.current();
    }

    /**
     * Returns, at subscription, the term of the reactive work it is part of: the term its Reactor
     * {@code Context} carries (a {@code @LeaderOnly} method returning a publisher, {@link
     * Term#executeReactive}), else as {@link #term()}; empty when there is none.
     */
    public Mono<Term> reactiveTerm() {
        if (!elections.isEnabled()) {
            return Mono.empty();
        }
        return Mono.deferContextual(
                context -> {
                    Elector elector = elector();
                    Term carried = elector.termIn(context).orElse(null);
                    return Mono.justOrEmpty(carried != null ? carried : term().orElse(null));
                });
    }

    /**
     * Returns, at subscription, the slot of the once-per-slot run the reactive work is part of (its
     * Reactor {@code Context} carries it), else as {@link #slot()}; empty outside a run.
     */
    public Mono<Slot> reactiveSlot() {
        return Mono.deferContextual(
                context -> {
                    Slot carried = context.getOrDefault(SlotAccessor.KEY, null);
                    return Mono.justOrEmpty(carried != null ? carried : slot().orElse(null));
                });
    }

    /**
     * Returns, at subscription, a reactive fencer of {@link #reactiveTerm()}; empty when there is
     * no term, an {@link ElectionDisabledException} when leader election is disabled.
     */
    public Mono<ReactiveFencer> reactiveFencer() {
        ElectionDisabledException disabled = elections.disabledException("no reactive fencer");
        if (disabled != null) {
            return Mono.error(disabled);
        }
        return reactiveTerm().map(Term::reactiveFencer);
    }

    /** Returns the fencer of {@link #term()}, or empty when not leading. */
    public Optional<Fencer> fencer() {
        return term().map(Term::fencer);
    }

    /**
     * Returns the fencer of {@link #term()}.
     *
     * @throws NotLeaderException when this instance does not lead the election
     * @throws ElectionDisabledException when leader election is disabled
     */
    public Fencer requireFencer() {
        ElectionDisabledException disabled = elections.disabledException("no fencer");
        if (disabled != null) {
            throw disabled;
        }
        return fencer().orElseThrow(() -> notLeader("no fencer"));
    }

    /** Returns the token of {@link #term()}, or empty when not leading. */
    public OptionalLong token() {
        @Nullable Term term = term().orElse(null);
        return term == null ? OptionalLong.empty() : OptionalLong.of(term.token());
    }

    /**
     * Returns whether this instance leads the election now: whether {@link #term()} is {@linkplain
     * Term#isActive() active}, not ended and before its local deadline. Advisory only.
     */
    public boolean isLeader() {
        return term().map(Term::isActive).orElse(false);
    }

    /**
     * Ends the current term of the election, if this instance leads it; see {@link
     * Elector#resign()}. Inside a partition run (where {@link #partition()} is present) it resigns
     * that partition instead, if the run's term is still the partition's current one: this instance
     * releases the partition and contends for it again like for any other; the main election is
     * left alone.
     */
    public void resign() {
        if (!elections.isEnabled()) {
            return;
        }
        Term partition = partitionTerm();
        if (partition == null) {
            elector().resign();
            return;
        }
        Elector partitionElector = partition.elector();
        if (partitionElector.term().orElse(null) == partition) {
            partitionElector.resign();
        }
    }

    /**
     * Returns this instance's id in the election; the main election's also inside a partition run
     * (a partitioned election configured with its own instance id reports it through {@link
     * PartitionedElection#instanceId()}). While leader election is disabled, the id the disabled
     * registry was given.
     */
    public String instanceId() {
        String disabled = elections.disabledInstanceId();
        if (disabled != null) {
            return disabled;
        }
        return elector().instanceId();
    }

    /**
     * Reads the current leader of the election and what it advertised (its URL, version and
     * attributes), with one round trip; see {@link Elector#leaderInfo()}. It reads the main
     * election's leader also inside a partition run.
     *
     * @return the leader, or empty when no instance holds the lease (always empty while leader
     *     election is disabled)
     */
    public Optional<LeaderInfo> leaderInfo() {
        if (!elections.isEnabled()) {
            return Optional.empty();
        }
        return elector().leaderInfo();
    }

    private NotLeaderException notLeader(String what) {
        Elector elector = elector();
        return new NotLeaderException(
                elector.name(),
                "redlease: " + what + ": this instance does not lead '" + elector.name() + "'");
    }

    @Override
    public String toString() {
        return "LeadershipContext[" + electionId + "]";
    }
}
