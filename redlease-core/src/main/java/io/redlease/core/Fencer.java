package io.redlease.core;

import java.time.Duration;
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

    private final LeaseProtocol protocol;

    private final Observer observer;

    private final String name;

    private final long token;

    Fencer(LeaseProtocol protocol, Observer observer, String name, long token) {
        this.protocol = protocol;
        this.observer = observer;
        this.name = name;
        this.token = token;
    }

    /** Returns the fencing token, for fencing a resource other than Redis. */
    public long token() {
        return token;
    }

    /**
     * Sets {@code key} to {@code value} if the token is current.
     *
     * @return whether the write was applied
     * @throws IllegalArgumentException if an argument is null or the key is the election's fence
     *     mark
     */
    public boolean set(String key, String value) {
        long start = System.nanoTime();
        return verdict(protocol.set(token, key, value), start);
    }

    /**
     * Sets {@code field} of the hash {@code key} to {@code value} if the token is current.
     *
     * @return whether the write was applied
     * @throws IllegalArgumentException if an argument is null or the key is the election's fence
     *     mark
     */
    public boolean hset(String key, String field, String value) {
        long start = System.nanoTime();
        return verdict(protocol.hset(token, key, field, value), start);
    }

    /**
     * Runs a Lua {@code body} if the token is current, atomically with the check.
     *
     * <p>{@code KEYS[1]} and {@code ARGV[1]} are reserved for the fence: the body addresses its own
     * keys as {@code KEYS[2..]} and its arguments as {@code ARGV[2..]}. The body runs inside a Lua
     * function: a {@code return} ends the body only, and the write counts as applied. A body that
     * raises an error (for example {@code WRONGTYPE}) surfaces it and does not advance the fence;
     * writes it made before the error are not rolled back (Redis scripts do not roll back). Bodies
     * are cached per elector, at most {@value TooManyEvalBodiesException#CAP}: keep them constant
     * and pass variable data as keys and arguments. On Redis Cluster every key must share the
     * election name's hash tag.
     *
     * @param keys the body's keys (may be empty)
     * @param args the body's arguments
     * @return whether the write was applied
     * @throws TooManyEvalBodiesException before any Redis call, when the body is new and the cache
     *     is full
     * @throws IllegalArgumentException if an argument is null or the body blank
     * @throws org.springframework.dao.DataAccessException if Redis fails or the body errors
     */
    public boolean eval(String body, List<String> keys, String... args) {
        long start = System.nanoTime();
        return verdict(protocol.eval(token, body, keys, args), start);
    }

    private boolean verdict(boolean applied, long start) {
        observer.onFencedWrite(
                applied, token < 1 ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - start));
        return applied;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Fencer that && protocol == that.protocol && token == that.token;
    }

    @Override
    public int hashCode() {
        return Objects.hash(System.identityHashCode(protocol), token);
    }

    @Override
    public String toString() {
        return "Fencer[" + name + ", token=" + token + "]";
    }
}
