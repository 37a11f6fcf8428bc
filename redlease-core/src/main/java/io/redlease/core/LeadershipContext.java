package io.redlease.core;

import io.redlease.core.scheduling.SlotAccessor;
import io.redlease.core.scheduling.SlotJobs;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Leadership as seen from application code: the current term's fencer and token for an election,
 * whether this instance leads it, and the lever to resign.
 *
 * <p>Inside work bound to a term (a {@code @LeaderOnly} method, {@link Term#execute}), the methods
 * answer for <em>that</em> term, even if it ends during the call: its fencer keeps its token, and
 * its writes are refused once a newer term exists. Elsewhere they answer for the elector's current
 * term. {@link #isLeader()} is advisory; act through {@link #fencer()}, whose writes are checked at
 * Redis.
 *
 * <p>An instance answers for the main election; {@link #election(String)} gives one for another.
 */
public final class LeadershipContext {

    private final Elections elections;

    private final String electionId;

    /**
     * Creates a context for the main election of the registry.
     *
     * @param elections the application's elections
     */
    public LeadershipContext(Elections elections) {
        this(elections, Elections.DEFAULT);
    }

    private LeadershipContext(Elections elections, String electionId) {
        this.elections = elections;
        this.electionId = electionId;
    }

    /**
     * Returns the context of another election.
     *
     * @param id the election id
     * @throws UnknownElectionException if there is no such election
     */
    public LeadershipContext election(String id) {
        String key = Elections.normalize(id);
        elections.get(key);
        return new LeadershipContext(elections, key);
    }

    /** Returns the elector of this context's election. */
    public Elector elector() {
        return elections.get(electionId);
    }

    /** Returns the term bound to the calling thread, else the elector's current term. */
    public Optional<Term> term() {
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
        return elector().boundTerm();
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
     * no term.
     */
    public Mono<ReactiveFencer> reactiveFencer() {
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
     */
    public Fencer requireFencer() {
        return fencer().orElseThrow(() -> notLeader("no fencer"));
    }

    /** Returns the token of {@link #term()}, or empty when not leading. */
    public OptionalLong token() {
        @Nullable Term term = term().orElse(null);
        return term == null ? OptionalLong.empty() : OptionalLong.of(term.token());
    }

    /** Returns whether this instance leads the election now; advisory only. */
    public boolean isLeader() {
        return term().map(Term::isActive).orElse(false);
    }

    /**
     * Ends the current term of the election, if this instance leads it; see {@link
     * Elector#resign()}.
     */
    public void resign() {
        elector().resign();
    }

    /** Returns this instance's id in the election. */
    public String instanceId() {
        return elector().instanceId();
    }

    /**
     * Reads the current leader of the election and what it advertised (its URL, version and
     * attributes), with one round trip; see {@link Elector#leaderInfo()}.
     *
     * @return the leader, or empty when no instance holds the lease
     */
    public Optional<LeaderInfo> leaderInfo() {
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
