package io.redlease.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

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
 * <p>A fence guards its own election's keys only: every key a write names must carry the election
 * name's hash tag (a name such as {@code {orders}}) or, for a name without one, start with {@code
 * <name>:}, or start with one of {@link ElectorConfig#fencedKeyPrefixes()}; the election's own keys
 * (lease, token counter, fence mark, leader info, candidates, slot ledgers) are never writable. Any
 * other key is refused with an {@link IllegalArgumentException} before Redis is called.
 *
 * <p>A write never waits past its term: it ends in one of three outcomes by the term's local
 * deadline (for a fencer of a token that is no term of this instance, within the time to live).
 *
 * <ul>
 *   <li><b>Applied</b>: the boolean forms return {@code true}, the throwing forms return.
 *   <li><b>Refused</b>: a newer term exists, or the term had passed its deadline when the write was
 *       attempted (it is not sent then). The boolean forms return {@code false}; the throwing forms
 *       ({@link #setOrThrow}, {@link #hsetOrThrow}, {@link #evalOrThrow}) throw a {@link
 *       FenceRefusedException}. Work that must not be acknowledged unless its write landed (a
 *       message, a scheduled slot) uses the throwing forms, so that a refusal is never ignored.
 *   <li><b>Unknown</b>: no reply came in time, the connection failed or was lost, or the calling
 *       thread was interrupted (its term ended) while it waited: a {@link
 *       FenceOutcomeUnknownException}, a Spring {@code DataAccessException}. The write may or may
 *       not have been applied.
 * </ul>
 *
 * <p>An error reply of Redis (a failing eval body, {@code WRONGTYPE}) is thrown as a Spring {@code
 * DataAccessException}, as the client reports it. A value type: equal when elector and token are
 * equal.
 */
public final class Fencer {

    private final FencedWrites writes;

    private final Observer observer;

    private final String name;

    private final long token;

    /** The term the token is this instance's, whose deadline bounds the writes; null if none. */
    private final @Nullable Term term;

    Fencer(FencedWrites writes, Observer observer, String name, long token, @Nullable Term term) {
        this.writes = writes;
        this.observer = observer;
        this.name = name;
        this.token = token;
        this.term = term;
    }

    /** Returns the fencing token, for fencing a resource other than Redis. */
    public long token() {
        return token;
    }

    /**
     * Sets {@code key} to {@code value} if the token is current.
     *
     * @return whether the write was applied
     * @throws IllegalArgumentException if an argument is null or the key is not the election's to
     *     write (see the class description)
     * @throws FenceOutcomeUnknownException if the outcome is unknown
     */
    public boolean set(String key, String value) {
        List<String> keys = writes.keys().single(key);
        String checked = LeaseProtocol.required(value, "value");
        long start = System.nanoTime();
        return verdict(writes.write(Scripts.FENCE_SET, keys, token, term, checked), start);
    }

    /**
     * Sets {@code field} of the hash {@code key} to {@code value} if the token is current.
     *
     * @return whether the write was applied
     * @throws IllegalArgumentException if an argument is null or the key is not the election's to
     *     write (see the class description)
     * @throws FenceOutcomeUnknownException if the outcome is unknown
     */
    public boolean hset(String key, String field, String value) {
        List<String> keys = writes.keys().single(key);
        String checkedField = LeaseProtocol.required(field, "field");
        String checkedValue = LeaseProtocol.required(value, "value");
        long start = System.nanoTime();
        return verdict(
                writes.write(Scripts.FENCE_HSET, keys, token, term, checkedField, checkedValue),
                start);
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
     * @throws IllegalArgumentException if an argument is null, the body blank, or a key not the
     *     election's to write (see the class description)
     * @throws FenceOutcomeUnknownException if the outcome is unknown
     * @throws org.springframework.dao.DataAccessException if Redis answers with an error, such as
     *     the body's
     */
    public boolean eval(String body, List<String> keys, String... args) {
        FencedWrites.requireBody(body);
        List<String> allKeys = writes.keys().eval(keys, args);
        LeaseProtocol.checkToken(token);
        RedisScript<Long> script = writes.evalScript(body);
        long start = System.nanoTime();
        return verdict(writes.write(script, allKeys, token, term, args), start);
    }

    /**
     * Sets {@code key} to {@code value} if the token is current, and throws if the fence refuses:
     * the form for work that must not be acknowledged unless the write landed (a listener, a job).
     *
     * @throws FenceRefusedException if the fence refused the write (see {@link #set})
     */
    public void setOrThrow(String key, String value) {
        if (!set(key, value)) {
            throw refused();
        }
    }

    /**
     * Sets {@code field} of the hash {@code key} to {@code value} if the token is current, and
     * throws if the fence refuses.
     *
     * @throws FenceRefusedException if the fence refused the write (see {@link #hset})
     */
    public void hsetOrThrow(String key, String field, String value) {
        if (!hset(key, field, value)) {
            throw refused();
        }
    }

    /**
     * Runs a Lua {@code body} if the token is current, atomically with the check, and throws if the
     * fence refuses; the rules of {@link #eval} apply.
     *
     * @throws FenceRefusedException if the fence refused the write (see {@link #eval})
     */
    public void evalOrThrow(String body, List<String> keys, String... args) {
        if (!eval(body, keys, args)) {
            throw refused();
        }
    }

    private FenceRefusedException refused() {
        return new FenceRefusedException(name, token);
    }

    private boolean verdict(boolean applied, long start) {
        observer.onFencedWrite(
                applied, token < 1 ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - start));
        return applied;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Fencer that && writes == that.writes && token == that.token;
    }

    @Override
    public int hashCode() {
        return Objects.hash(System.identityHashCode(writes), token);
    }

    @Override
    public String toString() {
        return "Fencer[" + name + ", token=" + token + "]";
    }
}
