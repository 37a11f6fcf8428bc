package io.redlease.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.data.redis.core.ReactiveRedisOperations;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Mono;

/**
 * The reactive form of {@link Fencer}: the same fenced writes, with the same scripts and the same
 * verdicts, as {@code Mono<Boolean>} over a reactive Redis connection. Each write runs when the
 * {@code Mono} is subscribed; {@code true} means applied, {@code false} that the token is stale.
 * Arguments are checked when the write is made, as {@link Fencer} checks them.
 */
public final class ReactiveFencer {

    private final LeaseProtocol protocol;

    private final ReactiveRedisOperations<String, String> redis;

    private final Observer observer;

    private final String name;

    private final long token;

    ReactiveFencer(
            LeaseProtocol protocol,
            ReactiveRedisOperations<String, String> redis,
            Observer observer,
            String name,
            long token) {
        this.protocol = protocol;
        this.redis = redis;
        this.observer = observer;
        this.name = name;
        this.token = token;
    }

    /** Returns the fencing token. */
    public long token() {
        return token;
    }

    /** Sets {@code key} to {@code value} if the token is current; see {@link Fencer#set}. */
    public Mono<Boolean> set(String key, String value) {
        List<String> keys = protocol.fencedKeys(key);
        return fence(Scripts.FENCE_SET, keys, LeaseProtocol.required(value, "value"));
    }

    /** Sets a field of a hash if the token is current; see {@link Fencer#hset}. */
    public Mono<Boolean> hset(String key, String field, String value) {
        List<String> keys = protocol.fencedKeys(key);
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
        LeaseProtocol.requireBody(body);
        List<String> allKeys = protocol.evalKeys(keys, args);
        return fence(protocol.evalScript(body), allKeys, args);
    }

    private Mono<Boolean> fence(RedisScript<Long> script, List<String> keys, String... args) {
        LeaseProtocol.checkToken(token);
        if (token < 1) {
            return Mono.just(Boolean.FALSE);
        }
        List<String> argv = new ArrayList<>(args.length + 1);
        argv.add(Long.toString(token));
        argv.addAll(List.of(args));
        return Mono.defer(
                () -> {
                    long start = System.nanoTime();
                    return redis.execute(script, keys, argv)
                            .next()
                            .map(reply -> reply == 1L)
                            .defaultIfEmpty(Boolean.FALSE)
                            .doOnNext(
                                    applied ->
                                            observer.onFencedWrite(
                                                    applied,
                                                    Duration.ofNanos(System.nanoTime() - start)));
                });
    }

    @Override
    public String toString() {
        return "ReactiveFencer[" + name + ", token=" + token + "]";
    }
}
