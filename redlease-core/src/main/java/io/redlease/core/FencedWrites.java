package io.redlease.core;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.core.ReactiveRedisOperations;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.publisher.Mono;

/**
 * One election's fenced calls, each bounded by its term: a call made with a term waits for its
 * reply until the term's local deadline at most (moved on by renewals meanwhile), and one past that
 * deadline is not sent and counts as refused; a call without a term of this instance (a fencer for
 * an explicit token that is no term of this instance) waits at most the time to live: the longest a
 * term can last without a renewal, and the bound of the elector's first acquire, which may open the
 * connection too.
 *
 * <p>Each call ends in one of three outcomes: applied ({@code true}), refused ({@code false}), or a
 * {@link FenceOutcomeUnknownException} when no reply came in time, the connection failed or was
 * lost, or the waiting thread was interrupted. An error reply of Redis (a Lua error of an eval
 * body, {@code WRONGTYPE}, a missing permission) is thrown as the client reported it: the script
 * ran, or was rejected, and the fence did not advance.
 */
final class FencedWrites {

    private final String name;

    private final ScriptRunner runner;

    private final FencedKeys keys;

    private final LongSupplier clock;

    private final long termlessBound;

    private final Map<String, RedisScript<Long>> evalScripts = new ConcurrentHashMap<>();

    FencedWrites(ElectorConfig config, ScriptRunner runner) {
        this.name = config.name();
        this.runner = runner;
        this.keys = new FencedKeys(config);
        this.clock = config.clock();
        this.termlessBound = config.ttl().toNanos();
    }

    FencedKeys keys() {
        return keys;
    }

    static void requireBody(@Nullable String body) {
        if (body == null || body.isBlank()) {
            throw new IllegalArgumentException("redlease: body must not be null or blank");
        }
    }

    /** Returns the fenced script of an eval body, cached per elector. */
    RedisScript<Long> evalScript(String body) {
        RedisScript<Long> script = evalScripts.get(body);
        if (script != null) {
            return script;
        }
        synchronized (evalScripts) {
            script = evalScripts.get(body);
            if (script == null) {
                if (evalScripts.size() >= TooManyEvalBodiesException.CAP) {
                    throw new TooManyEvalBodiesException();
                }
                script = Scripts.fenced(body);
                evalScripts.put(body, script);
            }
            return script;
        }
    }

    /**
     * Runs a fenced script on the calling thread and waits for its verdict within the bound.
     *
     * @return whether the write was applied; false without a call when the token is below 1 or the
     *     term is past its deadline
     */
    boolean write(
            RedisScript<Long> script,
            List<String> scriptKeys,
            long token,
            @Nullable Term term,
            String... args) {
        LeaseProtocol.checkToken(token);
        if (token < 1 || (term != null && term.pastDeadline())) {
            return false;
        }
        return isOne(await(runner.run(script, scriptKeys, argv(token, args)), token, term));
    }

    /** The reactive form of {@link #write}: the same bound, checked at subscription. */
    Mono<Boolean> write(
            ReactiveRedisOperations<String, String> redis,
            RedisScript<Long> script,
            List<String> scriptKeys,
            long token,
            @Nullable Term term,
            String... args) {
        LeaseProtocol.checkToken(token);
        if (token < 1) {
            return Mono.just(Boolean.FALSE);
        }
        List<String> argv = argv(token, args);
        return Mono.defer(
                () -> {
                    if (term != null && term.pastDeadline()) {
                        return Mono.just(Boolean.FALSE);
                    }
                    long until = clock.getAsLong() + termlessBound;
                    return redis.execute(script, scriptKeys, argv)
                            .next()
                            .map(FencedWrites::isOne)
                            .defaultIfEmpty(Boolean.FALSE)
                            .timeout(deadline(term, until))
                            .onErrorMap(
                                    error -> !(error instanceof Error),
                                    error -> failed(error, token, term));
                });
    }

    /** Signals when the call's bound has passed: the term's deadline, however renewals move it. */
    private Mono<Long> deadline(@Nullable Term term, long until) {
        return Mono.defer(
                () -> {
                    long left = (term != null ? term.deadlineNanos() : until) - clock.getAsLong();
                    return left <= 0
                            ? Mono.just(0L)
                            : Mono.delay(Duration.ofNanos(left)).then(deadline(term, until));
                });
    }

    /**
     * Waits for the reply of a fenced call within its bound, and returns it.
     *
     * @throws FenceOutcomeUnknownException when no reply came in time, the connection failed or the
     *     thread was interrupted; the call is cancelled
     */
    <T> @Nullable T await(CompletableFuture<T> reply, long token, @Nullable Term term) {
        long until = clock.getAsLong() + termlessBound;
        try {
            while (true) {
                long left = (term != null ? term.deadlineNanos() : until) - clock.getAsLong();
                try {
                    // A reply already there wins over a bound that has just passed.
                    return reply.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
                } catch (TimeoutException ex) {
                    if (term == null || term.pastDeadline()) {
                        reply.cancel(true);
                        throw unknown(token, noReply(term), null);
                    }
                    // A renewal moved the term's deadline meanwhile: wait on.
                }
            }
        } catch (InterruptedException ex) {
            reply.cancel(true);
            Thread.currentThread().interrupt();
            throw unknown(
                    token,
                    "the calling thread was interrupted while it waited for the reply"
                            + (term != null && term.endReason().isPresent()
                                    ? " (its term ended during the call)"
                                    : ""),
                    ex);
        } catch (ExecutionException | CancellationException ex) {
            throw failed(ex instanceof ExecutionException ? ex.getCause() : ex, token, term);
        }
    }

    private String noReply(@Nullable Term term) {
        return term != null
                ? "no reply came within the term's remaining time"
                : "no reply came within "
                        + TimeUnit.NANOSECONDS.toMillis(termlessBound)
                        + " ms (the time to live, the bound of a write with a token that is no term"
                        + " of this instance)";
    }

    /** Maps a failed call to its outcome: unknown, or an error reply of Redis as it came. */
    private RuntimeException failed(@Nullable Throwable error, long token, @Nullable Term term) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof Error fatal) {
            throw fatal;
        }
        if (cause == null) {
            return unknown(token, "the call failed without a cause", null);
        }
        if (errorReply(cause)) {
            return (RuntimeException) cause;
        }
        if (cause instanceof TimeoutException) {
            return unknown(token, noReply(term), cause);
        }
        if (cause instanceof CancellationException) {
            return unknown(token, "the call was cancelled", cause);
        }
        if (cause instanceof DataAccessException || cause instanceof RedisException) {
            return unknown(
                    token,
                    "the connection failed or was lost during the call (" + cause + ")",
                    cause);
        }
        // Anything else the call failed with (a connection factory stopped or destroyed while the
        // application shuts down, a client failure of another kind): no verdict came back.
        return unknown(token, "the call failed without a reply (" + cause + ")", cause);
    }

    /**
     * Returns whether Redis answered with an error reply: the call reached Redis and was rejected
     * or its script failed, so the fence did not advance. Lettuce reports those as {@link
     * RedisCommandExecutionException}; Spring translates a blocking client's as {@link
     * InvalidDataAccessApiUsageException}.
     */
    static boolean errorReply(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisCommandExecutionException
                    || cause instanceof InvalidDataAccessApiUsageException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    private FenceOutcomeUnknownException unknown(
            long token, String reason, @Nullable Throwable cause) {
        return new FenceOutcomeUnknownException(name, token, reason, cause);
    }

    private static List<String> argv(long token, String... args) {
        List<String> argv = new ArrayList<>(args.length + 1);
        argv.add(Long.toString(token));
        argv.addAll(List.of(args));
        return argv;
    }

    private static boolean isOne(@Nullable Object reply) {
        return reply != null && LeaseProtocol.asLong(reply) == 1L;
    }
}
