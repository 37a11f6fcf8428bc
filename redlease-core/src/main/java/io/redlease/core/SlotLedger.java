package io.redlease.core;

import java.time.Instant;
import java.time.ZoneId;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A once-per-slot job's ledger in Redis: the latest slot that completed, when it completed, for a
 * fixed rate the start the slots count from (recorded by the first claim), and where the job's
 * slots begin. It lives in the hash {@code <name>:slots:<job>}, beside the election's keys (so it
 * shares their hash tag on Redis Cluster).
 *
 * <p>Only a term that is current (its token not below the election's fence mark) and whose lease
 * Redis still holds for this instance can write it: a term {@linkplain #claim claims} the job
 * before its first run, which fences out every older term, and {@linkplain #mark marks} each slot
 * that completed. A leader whose lease lapsed cannot mark a slot even when no successor has been
 * elected yet, and the completed slot never goes backwards.
 *
 * <p>The ledger also holds whether the job is {@linkplain #pause paused}: any instance may pause or
 * {@linkplain #resume resume} it (an operator's act, not fenced), and every instance reads it
 * before each run.
 */
public final class SlotLedger {

    private final Elector elector;

    private final String job;

    private final String key;

    /**
     * Creates the ledger of a job in an election.
     *
     * @param job the job's id, unique within the election
     */
    public SlotLedger(Elector elector, String job) {
        if (job == null || job.isBlank()) {
            throw new IllegalArgumentException("redlease: the job id must not be blank");
        }
        this.elector = elector;
        this.job = job;
        this.key = keyPrefix(elector.name()) + job;
    }

    /** Returns what the keys of an election's ledgers start with. */
    static String keyPrefix(String name) {
        return name + ":slots:";
    }

    /** Returns the job's id. */
    public String job() {
        return job;
    }

    /** Returns the Redis key of the ledger. */
    public String key() {
        return key;
    }

    /** Reads the ledger; one round trip. */
    public State read() {
        return State.of(elector.protocol().readHash(key));
    }

    /**
     * Reads the ledger, waiting no longer than a fenced write would: for a term, until its
     * deadline; without one, the election's time to live. One round trip. This is the read the
     * job's scheduling makes (before each run, and at a follower's ticks): redlease's background
     * traffic, which a traced client's observation declines ({@link EngineTraffic}).
     *
     * @param term the term the read is for, or null
     * @throws FenceOutcomeUnknownException when no reply came within the bound
     */
    public State read(@Nullable Term term) {
        long token = term == null ? 0 : tokenOf(term);
        return State.of(
                LeaseProtocol.hashOf(
                        elector.fencedWrites()
                                .await(elector.protocol().readLedgerAsync(key), token, term)));
    }

    /**
     * Has a term take over the job and reads the ledger, in one round trip: from here on, marks of
     * older terms are refused.
     *
     * @param since where the job's slots begin, recorded by the first claim ever: a slot after it
     *     that never completes is missed, even before the job's first completion
     * @param zone the time zone the job's slots depend on, recorded by the first claim that names
     *     one; null when they depend on none
     * @return the ledger as the term found it, or empty when a newer term exists, Redis no longer
     *     holds the term's lease for this instance, or the term is past its local deadline (then
     *     nothing is sent)
     * @throws FenceOutcomeUnknownException when no reply came by the term's deadline
     */
    public Optional<State> claim(Term term, Instant since, @Nullable ZoneId zone) {
        return claim(term, since, zone, null);
    }

    /**
     * Claims the job like {@link #claim(Term, Instant, ZoneId)}, for a fixed rate recording the
     * start its slots count from if the ledger holds none: a successor counts the slots from the
     * same start even when no slot was ever marked.
     *
     * @param epoch the start of a fixed rate's slots, kept only if none is set yet; null for other
     *     triggers
     */
    public Optional<State> claim(
            Term term, Instant since, @Nullable ZoneId zone, @Nullable Instant epoch) {
        long token = tokenOf(term);
        if (term.pastDeadline()) {
            return Optional.empty(); // not sent: the term may no longer write
        }
        Map<String, String> fields =
                LeaseProtocol.claimedLedger(
                        elector.fencedWrites()
                                .await(
                                        elector.protocol()
                                                .claimLedger(
                                                        token,
                                                        key,
                                                        since.toEpochMilli(),
                                                        zone == null ? "" : zone.getId(),
                                                        epoch == null
                                                                ? ""
                                                                : Long.toString(
                                                                        epoch.toEpochMilli())),
                                        token,
                                        term));
        return fields == null ? Optional.empty() : Optional.of(State.of(fields));
    }

    /**
     * Marks a slot complete, for a term that is still current and still holds its lease; a slot not
     * newer than the completed one leaves the ledger as it is.
     *
     * @param start the start of a fixed rate's slots, kept only if none is set yet
     * @return what became of the mark; {@link Mark#LEASE_LOST}, without a call, when the term is
     *     past its local deadline
     * @throws FenceOutcomeUnknownException when no reply came by the term's deadline: the slot may
     *     or may not be marked
     */
    public Mark mark(Term term, Instant slot, Instant completedAt, Instant start) {
        long token = tokenOf(term);
        if (term.pastDeadline()) {
            return Mark.LEASE_LOST; // not sent: past its deadline, the term may no longer mark
        }
        Long answer =
                elector.fencedWrites()
                        .await(
                                elector.protocol()
                                        .markSlot(
                                                token,
                                                key,
                                                slot.toEpochMilli(),
                                                completedAt.toEpochMilli(),
                                                start.toEpochMilli()),
                                token,
                                term);
        long reply = answer == null ? -1 : answer;
        if (reply == 1) {
            return Mark.MARKED;
        }
        if (reply == 2) {
            return Mark.NOT_NEWER;
        }
        return reply == 0 ? Mark.FENCED_OUT : Mark.LEASE_LOST;
    }

    /**
     * Pauses the job on every instance: from the next run on, its slots are settled without running
     * until it is resumed. One round trip; not fenced.
     *
     * @param at when it is paused, on the job's clock
     * @return whether it was running (false: it was paused already)
     */
    public boolean pause(Instant at) {
        return elector.protocol().pauseLedger(key, true, at.toEpochMilli());
    }

    /**
     * Resumes a paused job on every instance: the slots up to {@code at} stay settled (they are not
     * caught up), the slots after it run. One round trip; not fenced.
     *
     * @param at when it is resumed, on the job's clock
     * @return whether it was paused (false: nothing changed)
     */
    public boolean resume(Instant at) {
        return elector.protocol().pauseLedger(key, false, at.toEpochMilli());
    }

    private long tokenOf(Term term) {
        if (term.elector() != elector) {
            throw new IllegalArgumentException(
                    "redlease: the term " + term + " is not a term of election " + elector.name());
        }
        return term.token();
    }

    @Override
    public String toString() {
        return "SlotLedger[" + key + "]";
    }

    /** What became of a {@link #mark}. */
    public enum Mark {
        /** The slot is recorded as the latest completed one. */
        MARKED,
        /** Nothing changed: the ledger holds this slot or a newer one already. */
        NOT_NEWER,
        /** Nothing changed: a newer term has been elected. */
        FENCED_OUT,
        /** Nothing changed: Redis no longer holds the term's lease for this instance. */
        LEASE_LOST
    }

    /**
     * The ledger's content.
     *
     * @param completedSlot the latest completed slot, or null before the first completion
     * @param completedAt when that slot's run completed
     * @param epoch where a fixed rate's slots count from
     * @param since where the job's slots begin: the first claim ever recorded it
     * @param zone the time zone the job's cron slots were computed in, if they depend on one
     * @param token the term that last claimed the job or marked a slot, 0 if none
     * @param pausedAt when the job was paused, while it is paused; null while it runs
     * @param resumedAt when the job was last resumed, if ever: the slots up to it are settled
     */
    public record State(
            @Nullable Instant completedSlot,
            @Nullable Instant completedAt,
            @Nullable Instant epoch,
            @Nullable Instant since,
            @Nullable String zone,
            long token,
            @Nullable Instant pausedAt,
            @Nullable Instant resumedAt) {

        /** An empty ledger. */
        public static final State EMPTY = new State(null, null, null, null, null, 0, null, null);

        /** A ledger of a job that was never paused. */
        public State(
                @Nullable Instant completedSlot,
                @Nullable Instant completedAt,
                @Nullable Instant epoch,
                @Nullable Instant since,
                @Nullable String zone,
                long token) {
            this(completedSlot, completedAt, epoch, since, zone, token, null, null);
        }

        /** Returns whether the job is paused. */
        public boolean paused() {
            return pausedAt != null;
        }

        static State of(Map<String, String> fields) {
            String paused = fields.get("paused");
            return new State(
                    instant(fields.get("slot")),
                    instant(fields.get("completed")),
                    instant(fields.get("epoch")),
                    instant(fields.get("since")),
                    fields.get("zone"),
                    fields.containsKey("token") ? Long.parseLong(fields.get("token")) : 0,
                    paused == null || paused.equals("0") ? null : instant(paused),
                    instant(fields.get("resumed")));
        }

        private static @Nullable Instant instant(@Nullable String millis) {
            return millis == null ? null : Instant.ofEpochMilli(Long.parseLong(millis));
        }
    }
}
