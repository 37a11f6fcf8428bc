package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.FenceOutcomeUnknownException;
import io.redlease.core.Fencer;
import io.redlease.core.InvalidElectorConfigException;
import io.redlease.core.InvalidElectorConfigException.Setting;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisNode;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.assertj.core.api.SoftAssertions;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * The bad-input catalogue: invalid configuration, hostile or broken fenced-eval bodies, election
 * keys of the wrong type or holding garbage, a looping body, Redis answering {@code OOM} and {@code
 * READONLY}. Each gets a clear error, none advances the mark without a write, and none loses a
 * write that was applied. ({@code NOAUTH} and ACL refusals are in {@link SecurityTests}, tokens of
 * 2^53 and more, zero and negative in {@link TokenLimitTests}, keys in another Cluster slot in
 * {@link ClusterTests}.)
 */
@ExtendWith(RedisExtension.class)
class BadInputTests {

    private static final Duration STEADY = Duration.ofMillis(2);

    // Invalid configuration.

    private record BadConfig(String what, Supplier<Object> build, Setting setting, String rule) {}

    @Test
    void invalidConfigurationIsRejectedWhenBuiltNamingTheSettingAndTheRule() {
        List<BadConfig> catalogue =
                List.of(
                        new BadConfig(
                                "empty name",
                                () -> ElectorConfig.builder("").build(),
                                Setting.NAME,
                                "empty Name"),
                        new BadConfig(
                                "null name",
                                () -> ElectorConfig.builder(null).build(),
                                Setting.NAME,
                                "empty Name"),
                        new BadConfig(
                                "negative TTL",
                                () -> ElectorConfig.builder("n").ttl(Duration.ofMillis(-1)).build(),
                                Setting.TTL,
                                "negative durations are not valid"),
                        new BadConfig(
                                "TTL under 100 ms",
                                () -> ElectorConfig.builder("n").ttl(Duration.ofMillis(99)).build(),
                                Setting.TTL,
                                "TTL must be at least 100ms"),
                        new BadConfig(
                                "renew interval over TTL/2",
                                () ->
                                        ElectorConfig.builder("n")
                                                .ttl(Duration.ofSeconds(1))
                                                .renewInterval(Duration.ofMillis(501))
                                                .build(),
                                Setting.RENEW_INTERVAL,
                                "RenewInterval must be at most TTL/2"),
                        new BadConfig(
                                "renew interval under 1 ms",
                                () ->
                                        ElectorConfig.builder("n")
                                                .renewInterval(Duration.ofNanos(500_000))
                                                .build(),
                                Setting.RENEW_INTERVAL,
                                "RenewInterval must be at least 1ms"),
                        new BadConfig(
                                "acquire interval not below the TTL",
                                () ->
                                        ElectorConfig.builder("n")
                                                .ttl(Duration.ofSeconds(1))
                                                .acquireInterval(Duration.ofSeconds(1))
                                                .build(),
                                Setting.ACQUIRE_INTERVAL,
                                "AcquireInterval must be less than TTL"),
                        new BadConfig(
                                "negative replica count",
                                () ->
                                        ElectorConfig.builder("n")
                                                .replicaAcknowledgement(-1, Duration.ofMillis(10))
                                                .build(),
                                Setting.REPLICA_ACKNOWLEDGEMENT,
                                "must not be negative"),
                        new BadConfig(
                                "replica acknowledgement timeout not below the acquire timeout",
                                () ->
                                        ElectorConfig.builder("n")
                                                .ttl(Duration.ofSeconds(1))
                                                .replicaAcknowledgement(1, Duration.ofMillis(500))
                                                .build(),
                                Setting.REPLICA_ACKNOWLEDGEMENT,
                                "less than the acquire timeout"));
        for (BadConfig bad : catalogue) {
            assertThatThrownBy(bad.build()::get)
                    .as(bad.what())
                    .isInstanceOfSatisfying(
                            InvalidElectorConfigException.class,
                            ex -> assertThat(ex.setting()).as(bad.what()).isEqualTo(bad.setting()))
                    .hasMessageStartingWith("redlease: ")
                    .hasMessageContaining(bad.rule());
        }
        List<Supplier<Object>> nulls =
                List.of(
                        () -> ElectorConfig.builder("n").ttl(null),
                        () -> ElectorConfig.builder("n").renewInterval(null),
                        () -> ElectorConfig.builder("n").acquireInterval(null),
                        () -> ElectorConfig.builder("n").instanceId(null),
                        () -> ElectorConfig.builder("n").observer(null),
                        () -> ElectorConfig.builder("n").clock(null),
                        () -> ElectorConfig.builder("n").replicaAcknowledgement(1, null));
        for (Supplier<Object> bad : nulls) {
            assertThatThrownBy(bad::get)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageEndingWith("must not be null");
        }
        // Templates that would put something other than plain keys on the wire.
        RedisTemplate<String, String> jdkKeys = new RedisTemplate<>();
        jdkKeys.setKeySerializer(RedisSerializer.java());
        assertThatThrownBy(() -> new Elector(jdkKeys, ElectorConfig.builder("n").build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key serializer");
        assertThatThrownBy(
                        () ->
                                new Elector(
                                        (StringRedisTemplate) null,
                                        ElectorConfig.builder("n").build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nil client");
        Figures.count(
                "bad inputs: invalid configurations rejected", catalogue.size() + nulls.size() + 2);
    }

    // Hostile or broken fenced-eval bodies.

    /** A body that must fail, and the words its error must contain. */
    private record Refused(String what, String body, List<String> keys, String error) {}

    /** A body that runs (the write counts as applied) but cannot move the mark off the token. */
    private record Contained(String what, String body, List<String> keys) {}

    @Test
    void hostileOrBrokenFenceEvalBodiesGetAClearErrorAndCannotMoveTheMarkOrLoseAWrite(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            // A long lease: the term must outlast the catalogue, even on a loaded machine.
            harness.timings(Duration.ofSeconds(3), Duration.ofMillis(300), Duration.ofMillis(300));
            Candidate a = harness.candidate("a", Workload.steady(Duration.ofMillis(5)));
            Harness.awaitLeading(a, Duration.ofSeconds(5));
            harness.awaitApplied("a", 3);
            long token = a.elector.token().orElseThrow();
            Fencer fencer = a.elector.fencer(token);
            StringRedisTemplate redis = harness.control();
            String hash = harness.name + ":hash";
            String target = harness.name + ":target";
            redis.opsForHash().put(hash, "f", "v");
            List<Refused> refused =
                    List.of(
                            new Refused("not Lua", "this is not Lua", List.of(), "compiling"),
                            new Refused(
                                    "raises an error",
                                    "error('hostile body')",
                                    List.of(),
                                    "hostile body"),
                            new Refused(
                                    "writes a key of the wrong type",
                                    "redis.call('INCR', KEYS[2])",
                                    List.of(hash),
                                    "WRONGTYPE"),
                            new Refused(
                                    "runs a command scripts may not run",
                                    "redis.call('MULTI')",
                                    List.of(),
                                    "not allowed from script"),
                            new Refused(
                                    "reaches outside the sandbox",
                                    "os.exit(1)",
                                    List.of(),
                                    "nonexistent global variable 'os'"),
                            new Refused(
                                    "replaces redis.call",
                                    "redis.call = function() return 1 end",
                                    List.of(),
                                    "readonly table"),
                            new Refused(
                                    "writes, then raises an error",
                                    "redis.call('SET', KEYS[2], ARGV[2]) error('after the write')",
                                    List.of(target),
                                    "after the write"));
            for (Refused bad : refused) {
                assertThatThrownBy(() -> fencer.eval(bad.body(), bad.keys(), "x"))
                        .as(bad.what())
                        .isInstanceOf(DataAccessException.class)
                        .satisfies(
                                ex ->
                                        assertThat(Harness.describe(ex))
                                                .as(bad.what())
                                                .contains(bad.error()));
                assertThat(mark(harness)).as(bad.what() + ": the mark").isEqualTo(token);
            }
            // Redis scripts do not roll back: what a body wrote before its error stays.
            assertThat(redis.opsForValue().get(target)).isEqualTo("x");
            assertThat(redis.opsForHash().get(hash, "f")).isEqualTo("v");
            List<Contained> contained =
                    List.of(
                            new Contained(
                                    "lowers the mark",
                                    "redis.call('SET', KEYS[1], '0')",
                                    List.of()),
                            new Contained(
                                    "deletes the mark", "redis.call('DEL', KEYS[1])", List.of()),
                            new Contained(
                                    "raises the mark",
                                    "redis.call('SET', KEYS[1], '9007199254740991')",
                                    List.of()),
                            new Contained(
                                    "returns before its write",
                                    "if true then return end redis.call('SET', KEYS[2], 'never')",
                                    List.of(target)),
                            new Contained(
                                    "returns an error reply (the body's reply is discarded)",
                                    "return redis.error_reply('refused by the body')",
                                    List.of()),
                            // The counter is the election's own key, which a fenced write
                            // may not name (below); a body can still reach it undeclared.
                            new Contained(
                                    "lowers the token counter",
                                    "redis.call('SET', '" + harness.log.counterKey() + "', '0')",
                                    List.of()));
            assertThatThrownBy(
                            () ->
                                    fencer.eval(
                                            "redis.call('SET', KEYS[2], '0')",
                                            List.of(harness.log.counterKey())))
                    .as("names the token counter")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reserved");
            for (Contained body : contained) {
                assertThat(fencer.eval(body.body(), body.keys(), "x"))
                        .as(body.what() + ": applied")
                        .isTrue();
                assertThat(mark(harness)).as(body.what() + ": the mark").isEqualTo(token);
            }
            assertThat(redis.opsForValue().get(target)).isEqualTo("x");
            // The lowered counter heals from the mark: the next term's token is still greater.
            a.elector.resign();
            harness.await(
                    "a term after the counter was lowered",
                    Duration.ofSeconds(5),
                    () -> harness.history.elections().stream().anyMatch(e -> e.token() > token));
            Figures.count(
                    "bad inputs: fenced-eval bodies refused or contained",
                    refused.size() + contained.size());
            // The workload kept writing through all of it: nothing it was told applied is lost.
            Harness.assertSafe(harness.check());
        }
    }

    /**
     * A body may rewrite the fence's own {@code ARGV[1]} or {@code KEYS[1]} (they are plain Lua
     * tables), and the fence's epilogue stamps whatever they hold then: {@code table.remove(ARGV,
     * 1)} (a natural way to "shift" the user's arguments) or {@code ARGV[1] = '1'} sets the mark to
     * a value of the body's choosing, lowering it so that a stale token is accepted afterwards;
     * {@code KEYS[1] = KEYS[2]} stamps the token into the user's key and leaves the mark alone.
     */
    @Test
    void aBodyThatRewritesTheFencesOwnArgumentsCannotMoveTheMark(RedisServer server, TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            StringRedisTemplate redis = harness.control();
            redis.opsForValue().set(harness.log.counterKey(), "41");
            try (Elector elector =
                    new Elector(
                            redis,
                            harness.config().instanceId("a").ttl(Duration.ofSeconds(3)).build())) {
                elector.start();
                Awaitility.await().atMost(scaled(Duration.ofSeconds(5))).until(elector::isLeader);
                long token = elector.token().orElseThrow();
                Fencer fencer = elector.fencer(token);
                String key = harness.name + ":value";
                SoftAssertions softly = new SoftAssertions();
                softly.assertThat(fencer.eval("ARGV[1] = '1'", List.of())).isTrue();
                softly.assertThat(mark(harness))
                        .as("the mark after ARGV[1] = '1'")
                        .isEqualTo(token);
                softly.assertThat(elector.fencer(token - 1).set(key, "stale"))
                        .as("a stale token accepted after a body rewrote ARGV[1]")
                        .isFalse();
                softly.assertThat(fencer.eval("table.remove(ARGV, 1)", List.of(), "7")).isTrue();
                softly.assertThat(mark(harness))
                        .as("the mark after table.remove(ARGV, 1)")
                        .isEqualTo(token);
                redis.opsForValue().set(key, "mine");
                softly.assertThat(fencer.eval("KEYS[1] = KEYS[2]", List.of(key))).isTrue();
                softly.assertThat(redis.opsForValue().get(key))
                        .as("the user's key after KEYS[1] = KEYS[2]")
                        .isEqualTo("mine");
                softly.assertThat(mark(harness))
                        .as("the mark after KEYS[1] = KEYS[2]")
                        .isEqualTo(token);
                softly.assertAll();
            }
        }
    }

    /**
     * A body that loops holds Redis: its caller does not wait past its term, but gets a {@link
     * FenceOutcomeUnknownException} by the term's deadline while the body still runs; the leader
     * steps down, SCRIPT KILL ends the body, and a leader is back.
     */
    @Test
    void aLoopingBodysCallerGetsAnUnknownOutcomeByItsDeadlineAndALeaderIsBackAfterAKill(
            @Dedicated(extraArgs = {"--busy-reply-threshold", "100"}) RedisServer server,
            TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            harness.candidate("a", Workload.steady(STEADY));
            harness.candidate("b", Workload.steady(STEADY));
            Candidate leader = harness.awaitWritingLeader(3);
            long token = leader.elector.token().orElseThrow();
            long began = System.nanoTime();
            CompletableFuture<@Nullable Throwable> looping =
                    CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    leader.elector
                                            .fencer(token)
                                            .eval("while true do end", List.of());
                                    return null;
                                } catch (RuntimeException ex) {
                                    return ex;
                                }
                            });
            // While the body loops Redis answers everything else with BUSY: the leader's renewals
            // fail, and it steps down by its own deadline.
            harness.await(
                    leader.id + " steps down while Redis is busy",
                    Duration.ofSeconds(5),
                    () ->
                            harness.history.stepDowns(leader.id).stream()
                                    .anyMatch(s -> s.at() - began > 0));
            assertThat(harness.history.failures())
                    .anyMatch(f -> f.at() - began > 0 && f.error().contains("BUSY"));
            // The caller's wait ended with its term, before the body was killed.
            Throwable error = looping.get(10, TimeUnit.SECONDS);
            assertThat(error)
                    .isInstanceOf(FenceOutcomeUnknownException.class)
                    .isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("no reply came within the term's remaining time");
            server.command("SCRIPT", "KILL");
            long healed = System.nanoTime();
            harness.fault("fenced-eval body looping (SCRIPT KILL)", began, healed);
            harness.assertLeaderBackAfterHeal(
                    "fenced-eval body looping", healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
            Figures.count("bad inputs: looping body killed", 1);
        }
    }

    // Election keys of the wrong type or holding garbage.

    enum Broken {
        LEASE_OF_THE_WRONG_TYPE(":leader", null, "WRONGTYPE"),
        LEASE_OVERWRITTEN_WITHOUT_A_TTL(":leader", "intruder", null),
        COUNTER_NOT_A_NUMBER(":fence", "not-a-number", "must hold a decimal integer"),
        COUNTER_OF_THE_WRONG_TYPE(":fence", null, "WRONGTYPE"),
        MARK_NOT_A_NUMBER(":fence:applied", "not-a-number", "must hold a decimal integer"),
        MARK_OF_THE_WRONG_TYPE(":fence:applied", null, "WRONGTYPE"),
        MARK_NOT_AN_INTEGER(":fence:applied", "1.5", "must hold a decimal integer");

        final String suffix;

        /** The garbage string written into the key, or null for a hash (the wrong type). */
        final @Nullable String garbage;

        /** What the errors must say, or null when no operation fails. */
        final @Nullable String error;

        Broken(String suffix, @Nullable String garbage, @Nullable String error) {
            this.suffix = suffix;
            this.garbage = garbage;
            this.error = error;
        }
    }

    private static final RedisScript<Long> MAKE_HASH =
            RedisScript.of(
                    "redis.call('DEL', KEYS[1]) return redis.call('HSET', KEYS[1], 'f', 'v')",
                    Long.class);

    @ParameterizedTest
    @EnumSource(Broken.class)
    void aBrokenElectionKeyStartsNoTermAndAfterRepairTokensStillIncrease(
            Broken broken, RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            StringRedisTemplate redis = harness.control();
            // An established election, whose keys then break.
            redis.opsForValue().set(harness.log.counterKey(), "41");
            harness.candidate("a", Workload.steady(STEADY));
            harness.candidate("b", Workload.steady(STEADY));
            Candidate leader = harness.awaitWritingLeader(3);
            String key = harness.name + broken.suffix;
            long maxBefore = maxToken(harness);
            long began = System.nanoTime();
            if (broken.garbage == null) {
                redis.execute(MAKE_HASH, List.of(key));
            } else {
                redis.opsForValue().set(key, broken.garbage);
            }
            long brokenAt = System.nanoTime();
            if (broken.suffix.equals(":fence") || broken == Broken.MARK_NOT_AN_INTEGER) {
                // Make everyone contend: only an election reads the counter.
                leader.elector.resign();
            }
            if (broken.error != null) {
                harness.await(
                        "errors saying " + broken.error,
                        Duration.ofSeconds(5),
                        () ->
                                harness.history.failures().stream()
                                                .filter(
                                                        f ->
                                                                f.at() - began > 0
                                                                        && f.error()
                                                                                .contains(
                                                                                        broken.error))
                                                .count()
                                        >= 3);
                // The leader's renewals fail too (lease, mark) or it resigned (counter): it
                // steps down, and nobody takes over while the key is broken.
                harness.await(
                        "no leader while the key is broken",
                        harness.ttl.plus(Duration.ofSeconds(2)),
                        () -> harness.leader().isEmpty());
                long failures = harness.history.failures().size();
                harness.await(
                        "more failed acquires",
                        Duration.ofSeconds(5),
                        () -> harness.history.failures().size() >= failures + 2);
                assertThat(electionsAfter(harness, began)).as("terms started").isEmpty();
                if (broken.suffix.equals(":fence:applied")) {
                    assertThat(harness.history.writes())
                            .filteredOn(w -> w.start() - brokenAt > 0)
                            .noneMatch(w -> w.outcome() == History.Outcome.APPLIED);
                }
                // Nothing repaired the key behind our back, and nothing else moved.
                assertThat(redis.type(key).code())
                        .isEqualTo(broken.garbage == null ? "hash" : "string");
                if (!broken.suffix.equals(":fence:applied")) {
                    assertThat(mark(harness)).isLessThanOrEqualTo(maxBefore);
                }
            } else if (broken == Broken.LEASE_OVERWRITTEN_WITHOUT_A_TTL) {
                // The leader's renewal finds someone else's id: it steps down at once.
                harness.await(
                        leader.id + " steps down LOST",
                        Duration.ofSeconds(5),
                        () ->
                                harness.history.stepDowns(leader.id).stream()
                                        .anyMatch(
                                                s ->
                                                        s.at() - began > 0
                                                                && s.reason().equals("LOST")));
                // An id without a TTL holds the lease until someone removes it; observe a few
                // acquire intervals (a fault window, not a synchronisation).
                Thread.sleep(5 * harness.acquireInterval.toMillis()); // fault window
                assertThat(electionsAfter(harness, began)).as("terms started").isEmpty();
                Elector.LeaseHolder holder = leader.elector.holder().orElseThrow();
                assertThat(holder.instanceId()).isEqualTo("intruder");
                assertThat(holder.remaining()).isNull();
            }
            if (broken.garbage == null || broken.error != null || broken.suffix.equals(":leader")) {
                // The repair an operator would make.
                redis.delete(key);
            }
            long healed = System.nanoTime();
            harness.fault("election key broken: " + broken, began, healed);
            harness.assertLeaderBackAfterHeal(
                    "election key broken: " + broken, healed, Duration.ofSeconds(1));
            assertThat(electionsAfter(harness, began))
                    .isNotEmpty()
                    .allMatch(e -> e.token() > maxBefore);
            Harness.assertSafe(harness.check());
            Figures.count("bad inputs: broken election keys", 1);
        }
    }

    @Test
    void garbageInTheCounterOrTheMarkIsRefusedBeforeAnyWriteWithAnErrorNamingTheKey(
            RedisServer server, TestInfo info) throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            // Long bounds: the first acquire must get its reply, not time out on a cold start.
            harness.timings(Duration.ofSeconds(2), Duration.ofMillis(200), Duration.ofMillis(500));
            StringRedisTemplate redis = harness.control();
            String lease = harness.name + ":leader";
            SoftAssertions softly = new SoftAssertions();
            redis.opsForValue().set(harness.log.markKey(), "1.5");
            Candidate a = harness.candidate("a", Workload.steady(STEADY));
            softly.assertThat(firstScriptError(harness, "a"))
                    .as("the error for a mark of 1.5")
                    .contains(harness.log.markKey());
            a.close();
            softly.assertThat(redis.opsForValue().get(harness.log.counterKey()))
                    .as("the counter after a failed acquire")
                    .isNull();
            softly.assertThat(redis.hasKey(lease)).as("lease taken by a failed acquire").isFalse();

            redis.delete(List.of(harness.log.markKey(), harness.log.counterKey(), lease));
            redis.opsForValue().set(harness.log.counterKey(), "not-a-number");
            Candidate b = harness.candidate("b", Workload.steady(STEADY));
            softly.assertThat(firstScriptError(harness, "b"))
                    .as("the error for a counter of 'not-a-number'")
                    .contains(harness.log.counterKey());
            b.close();
            softly.assertThat(redis.hasKey(lease)).as("lease taken by a failed acquire").isFalse();
            softly.assertAll();
        }
    }

    /** Waits for the candidate's first failure that is an error from Redis; returns it. */
    private static String firstScriptError(Harness harness, String candidate) {
        harness.await(
                candidate + " gets an error from Redis",
                Duration.ofSeconds(5),
                () ->
                        harness.history.failures().stream()
                                .anyMatch(
                                        f ->
                                                f.candidate().equals(candidate)
                                                        && !f.error().contains("QueryTimeout")));
        return harness.history.failures().stream()
                .filter(f -> f.candidate().equals(candidate) && !f.error().contains("QueryTimeout"))
                .findFirst()
                .orElseThrow()
                .error();
    }

    // Redis answering errors.

    @Test
    void outOfMemoryFailsFencedWritesAndAcquiresClearlyAndMovesNothing(
            @Dedicated(extraArgs = {"--maxmemory-policy", "noeviction"}) RedisServer server,
            TestInfo info)
            throws Exception {
        try (Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            harness.candidate("a", Workload.steady(STEADY));
            harness.candidate("b", Workload.steady(STEADY));
            Candidate leader = harness.awaitWritingLeader(3);
            long began = System.nanoTime();
            server.command("CONFIG", "SET", "maxmemory", "1");
            long oomAt = System.nanoTime();
            long markAt = mark(harness);
            // Renewals only extend the lease, which Redis allows out of memory: the leader keeps
            // its term, and every fenced write fails.
            harness.await(
                    "fenced writes refused with OOM",
                    Duration.ofSeconds(5),
                    () ->
                            harness.history.writes(leader.id).stream()
                                            .filter(
                                                    w ->
                                                            w.start() - began > 0
                                                                    && w.error().contains("OOM"))
                                            .count()
                                    >= 3);
            // A new term needs memory: the acquires fail too.
            leader.elector.resign();
            harness.await(
                    "acquires refused with OOM",
                    Duration.ofSeconds(5),
                    () ->
                            harness.history.failures().stream()
                                            .filter(
                                                    f ->
                                                            f.at() - began > 0
                                                                    && f.operation()
                                                                            .equals("ACQUIRE")
                                                                    && f.error().contains("OOM"))
                                            .count()
                                    >= 2);
            assertThat(electionsAfter(harness, began)).isEmpty();
            assertThat(mark(harness)).isEqualTo(markAt);
            // A write sent after the limit was set reaches Redis after it: none is applied.
            assertThat(harness.history.writes())
                    .filteredOn(w -> w.start() - oomAt > 0)
                    .noneMatch(w -> w.outcome() == History.Outcome.APPLIED);
            server.command("CONFIG", "SET", "maxmemory", "0");
            long healed = System.nanoTime();
            harness.fault("Redis out of memory (maxmemory, noeviction)", began, healed);
            harness.assertLeaderBackAfterHeal("out of memory", healed, Duration.ofSeconds(1));
            Harness.assertSafe(harness.check());
            Figures.count("bad inputs: OOM", 1);
        }
    }

    @Test
    void anElectorPointedAtAReplicaGetsReadonlyAndNothingIsApplied(
            @Dedicated RedisServer server, TestInfo info) throws Exception {
        try (RedisNode replica =
                        RedisNode.start(
                                "--replicaof", server.host(), Integer.toString(server.port()));
                Connections viaReplica = new Connections();
                Harness harness = new Harness(info, server.host(), server.port())) {
            harness.direct = true;
            harness.candidate("p", Workload.steady(STEADY));
            Candidate leader = harness.awaitWritingLeader(3);
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(10)))
                    .until(() -> "up".equals(replica.info("replication", "master_link_status")));
            Candidate misdirected =
                    new Candidate(
                            "r",
                            viaReplica.standalone(replica.host(), replica.port()),
                            null,
                            harness.config(),
                            harness.history,
                            harness.log,
                            Workload.steady(STEADY));
            try {
                misdirected.start();
                harness.await(
                        "acquires refused with READONLY",
                        Duration.ofSeconds(5),
                        () ->
                                harness.history.failures().stream()
                                                .filter(
                                                        f ->
                                                                f.candidate().equals("r")
                                                                        && f.error()
                                                                                .contains(
                                                                                        "READONLY"))
                                                .count()
                                        >= 2);
                OptionalLong token = leader.elector.token();
                String key = harness.name + ":via-replica";
                assertThatThrownBy(() -> misdirected.elector.fencer(token.orElse(1)).set(key, "x"))
                        .isInstanceOf(DataAccessException.class)
                        .satisfies(ex -> assertThat(Harness.describe(ex)).contains("READONLY"));
                assertThat(harness.control().hasKey(key)).isFalse();
                assertThat(harness.history.elections("r")).isEmpty();
            } finally {
                misdirected.close();
            }
            Harness.assertSafe(harness.check());
            Figures.count("bad inputs: READONLY", 1);
        }
    }

    // Helpers.

    private static long mark(Harness harness) {
        String mark = harness.control().opsForValue().get(harness.log.markKey());
        return mark == null ? 0 : Long.parseLong(mark);
    }

    private static long maxToken(Harness harness) {
        return harness.history.elections().stream()
                .mapToLong(History.Election::token)
                .max()
                .orElse(0);
    }

    private static List<History.Election> electionsAfter(Harness harness, long since) {
        List<History.Election> after = new ArrayList<>();
        for (History.Election election : harness.history.elections()) {
            if (election.at() - since > 0) {
                after.add(election);
            }
        }
        return after;
    }
}
