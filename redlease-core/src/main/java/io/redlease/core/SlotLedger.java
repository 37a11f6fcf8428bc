package io.redlease.core;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A once-per-slot job's ledger in Redis: the latest slot that completed, when it completed, and for
 * a fixed rate the start the slots count from. It lives in the hash {@code <name>:slots:<job>},
 * beside the election's keys (so it shares their hash tag on Redis Cluster), and every write goes
 * through the fence of the term that makes it: a leader whose term is over cannot mark a slot once
 * a successor has written, and the completed slot never goes backwards.
 */
public final class SlotLedger {

    /** Records the term that took over the job; moves the election's fence mark to it. */
    private static final String CLAIM = "redis.call('HSET', KEYS[2], 'token', ARGV[2])";

    /**
     * Marks a slot complete if it is newer than the completed one, and sets the start once. ARGV:
     * token, slot, completion time, start (all epoch milliseconds but the token).
     */
    private static final String COMPLETE =
            """
            local done = tonumber(redis.call('HGET', KEYS[2], 'slot'))
            if done == nil or tonumber(ARGV[3]) > done then
              redis.call('HSET', KEYS[2], 'slot', ARGV[3], 'completed', ARGV[4], 'token', ARGV[2])
            end
            redis.call('HSETNX', KEYS[2], 'epoch', ARGV[5])
            """;

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
        this.key = elector.name() + ":slots:" + job;
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
        Map<String, String> fields = elector.protocol().readHash(key);
        return new State(
                instant(fields.get("slot")),
                instant(fields.get("completed")),
                instant(fields.get("epoch")),
                fields.containsKey("token") ? Long.parseLong(fields.get("token")) : 0);
    }

    /**
     * Records that a term has taken over the job, through its fence: from here on, writes of older
     * terms are refused.
     *
     * @return whether the term is still current (the write was applied)
     */
    public boolean claim(Term term) {
        Fencer fencer = term.fencer();
        return fencer.eval(CLAIM, List.of(key), Long.toString(fencer.token()));
    }

    /**
     * Marks a slot complete through the term's fence; a slot not newer than the completed one
     * leaves the ledger as it is.
     *
     * @param start the start of a fixed rate's slots, kept only if none is set yet
     * @return whether the term was still current (the write was applied)
     */
    public boolean complete(Term term, Instant slot, Instant completedAt, Instant start) {
        Fencer fencer = term.fencer();
        return fencer.eval(
                COMPLETE,
                List.of(key),
                Long.toString(fencer.token()),
                Long.toString(slot.toEpochMilli()),
                Long.toString(completedAt.toEpochMilli()),
                Long.toString(start.toEpochMilli()));
    }

    private static @Nullable Instant instant(@Nullable String millis) {
        return millis == null ? null : Instant.ofEpochMilli(Long.parseLong(millis));
    }

    @Override
    public String toString() {
        return "SlotLedger[" + key + "]";
    }

    /**
     * The ledger's content.
     *
     * @param completedSlot the latest completed slot, or null before the first completion
     * @param completedAt when that slot's run completed
     * @param epoch where a fixed rate's slots count from
     * @param token the term that last took over or marked the job, 0 if none
     */
    public record State(
            @Nullable Instant completedSlot,
            @Nullable Instant completedAt,
            @Nullable Instant epoch,
            long token) {

        /** An empty ledger. */
        public static final State EMPTY = new State(null, null, null, 0);
    }
}
