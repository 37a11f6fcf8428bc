package io.redlease.core;

import java.util.List;
import java.util.Objects;

/**
 * A fencing token bound to the elector that minted it: writes made through it are applied only
 * while the token is current.
 *
 * <p>Each write runs one Lua script that checks the token against the election's high-water mark
 * and performs the write atomically; a token below the newest elected term or applied write is
 * refused at Redis. The token is pinned: a fencer kept past its term keeps its old token and is
 * fenced out once a newer term is elected. Fencing protects only writes that go through it (or
 * resources that check {@link #token()} themselves, such as a conditional SQL update).
 *
 * <p>Every method returns {@code true} when the write was applied and {@code false} when the token
 * is stale: a newer leader exists and this one should stop. Redis failures are thrown as Spring
 * {@code DataAccessException}s. A value type: equal when elector and token are equal.
 */
public final class Fencer {

    private final Elector elector;

    private final long token;

    Fencer(Elector elector, long token) {
        this.elector = elector;
        this.token = token;
    }

    /** Returns the fencing token, for fencing a resource other than Redis. */
    public long token() {
        return token;
    }

    /** Returns the elector this token belongs to. */
    public Elector elector() {
        return elector;
    }

    /**
     * Sets {@code key} to {@code value} if the token is current.
     *
     * @return whether the write was applied
     */
    public boolean set(String key, String value) {
        return elector.fenceSet(token, key, value);
    }

    /**
     * Sets {@code field} of the hash {@code key} to {@code value} if the token is current.
     *
     * @return whether the write was applied
     */
    public boolean hset(String key, String field, String value) {
        return elector.fenceHSet(token, key, field, value);
    }

    /**
     * Runs a Lua {@code body} if the token is current; see {@link Elector#fenceEval}.
     *
     * @return whether the write was applied
     */
    public boolean eval(String body, List<String> keys, String... args) {
        return elector.fenceEval(token, body, keys, args);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Fencer that && elector == that.elector && token == that.token;
    }

    @Override
    public int hashCode() {
        return Objects.hash(System.identityHashCode(elector), token);
    }

    @Override
    public String toString() {
        return "Fencer[" + elector.name() + ", token=" + token + "]";
    }
}
