package io.redlease.core;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.ReactiveRedisOperations;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Mono;

/**
 * The reactive form of {@link Fencer}: the same fenced writes, with the same scripts, key rules and
 * outcomes, as {@code Mono}s over a reactive Redis connection. Each write runs when the {@code
 * Mono} is subscribed: {@code true} means applied, {@code false} refused (the throwing forms fail
 * with a {@link FenceRefusedException} instead), and a {@link FenceOutcomeUnknownException} signals
 * an unknown outcome, by the term's local deadline at the latest. A write subscribed past the
 * term's deadline is not sent and counts as refused. Arguments are checked when the write is made,
 * as {@link Fencer} checks them.
 */
public final class ReactiveFencer {

    private final FencedWrites writes;

    private final ReactiveRedisOperations<String, String> redis;

    private final Observer observer;

    private final String name;

    private final long token;

    private final @Nullable Term term;

    ReactiveFencer(
            FencedWrites writes,
            ReactiveRedisOperations<String, String> redis,
            Observer observer,
            String name,
            long token,
            @Nullable Term term) {
        this.writes = writes;
        this.redis = redis;
        this.observer = observer;
        this.name = name;
        this.token = token;
        this.term = term;
    }

    /** Returns the fencing token. */
    public long token() {
        return token;
    }

    /** Sets {@code key} to {@code value} if the token is current; see {@link Fencer#set}. */
    public Mono<Boolean> set(String key, String value) {
        List<String> keys = writes.keys().single(key);
        return fence(Scripts.FENCE_SET, keys, LeaseProtocol.required(value, "value"));
    }

    /** Sets a field of a hash if the token is current; see {@link Fencer#hset}. */
    public Mono<Boolean> hset(String key, String field, String value) {
        List<String> keys = writes.keys().single(key);
        return fence(
                Scripts.FENCE_HSET,
                keys,
                LeaseProtocol.required(field, "field"),
                LeaseProtocol.required(value, "value"));
    }

    /**
     * Runs a Lua body if the token is current, atomically with the check; see {@link Fencer#eval}.
     */
    public Mono<Boolean> eval(String body, List<String> keys, String... args) {
        FencedWrites.requireBody(body);
        List<String> allKeys = writes.keys().eval(keys, args);
        LeaseProtocol.checkToken(token);
        return fence(writes.evalScript(body), allKeys, args);
    }

    /**
     * Sets {@code key} to {@code value} if the token is current; completes empty when applied and
     * fails with a {@link FenceRefusedException} when the fence refuses. See {@link
     * Fencer#setOrThrow}.
     */
    public Mono<Void> setOrThrow(String key, String value) {
        return orThrow(set(key, value));
    }

    /**
     * Sets a field of a hash if the token is current; completes empty when applied and fails with a
     * {@link FenceRefusedException} when the fence refuses. See {@link Fencer#hsetOrThrow}.
     */
    public Mono<Void> hsetOrThrow(String key, String field, String value) {
        return orThrow(hset(key, field, value));
    }

    /**
     * Runs a Lua body if the token is current, atomically with the check; completes empty when
     * applied and fails with a {@link FenceRefusedException} when the fence refuses. See {@link
     * Fencer#evalOrThrow}.
     */
    public Mono<Void> evalOrThrow(String body, List<String> keys, String... args) {
        return orThrow(eval(body, keys, args));
    }

    private Mono<Void> orThrow(Mono<Boolean> write) {
        return write.flatMap(
                applied ->
                        applied
                                ? Mono.<Void>empty()
                                : Mono.error(new FenceRefusedException(name, token)));
    }

    private Mono<Boolean> fence(RedisScript<Long> script, List<String> keys, String... args) {
        Mono<Boolean> write = writes.write(redis, script, keys, token, term, args);
        return Mono.defer(
                () -> {
                    long start = System.nanoTime();
                    return write.doOnNext(
                            applied ->
                                    observer.onFencedWrite(
                                            applied,
                                            token < 1
                                                    ? Duration.ZERO
                                                    : Duration.ofNanos(System.nanoTime() - start)));
                });
    }

    @Override
    public String toString() {
        return "ReactiveFencer[" + name + ", token=" + token + "]";
    }
}
