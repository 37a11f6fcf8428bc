package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Fenced SET, HSET and EVAL against a real Redis (Go: fence_test, TestFencer_*). */
@ExtendWith(RedisExtension.class)
class FencerTests {

    private static final String ZADD = "redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])";

    private final Templates templates = new Templates();

    private final Recorder recorder = new Recorder();

    private RedisServer server;

    private StringRedisTemplate redis;

    private String name;

    private Elector elector;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = templates.on(server);
        // Opens the shared connection: a write with a token that is no term of this instance
        // waits one TTL for its reply, connecting a cold JVM included.
        redis.hasKey("warm-up");
        this.name = Names.unique(info);
        this.elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name).instanceId("a").observer(recorder).build());
    }

    @AfterEach
    void tearDown() {
        templates.close();
    }

    private String key(String suffix) {
        return name + ":" + suffix;
    }

    private String mark() {
        return redis.opsForValue().get(key("fence:applied"));
    }

    @Test
    void staleTokenIsRejectedAndEqualTokenAccepted() {
        assertThat(elector.fencer(5).hset(key("state"), "k", "five")).isTrue();
        assertThat(elector.fencer(3).hset(key("state"), "k", "three")).isFalse();
        assertThat(redis.opsForHash().get(key("state"), "k")).isEqualTo("five");
        assertThat(elector.fencer(5).hset(key("state"), "k", "five-again")).isTrue();
        assertThat(elector.fencer(6).hset(key("state"), "k", "six")).isTrue();
        assertThat(redis.opsForHash().get(key("state"), "k")).isEqualTo("six");
        assertThat(mark()).isEqualTo("6");
    }

    @Test
    void aWriteCarryingTheMarksOwnTokenLeavesTheMarkAlone(@Dedicated RedisServer own) {
        StringRedisTemplate template = templates.on(own);
        Elector fenced = new Elector(template, ElectorConfig.builder(name).instanceId("a").build());
        assertThat(fenced.fencer(5).set(key("state"), "first")).isTrue();
        long before = setCalls(own);
        assertThat(fenced.fencer(5).set(key("state"), "second")).isTrue();
        assertThat(setCalls(own) - before).as("SETs for a write at the mark").isEqualTo(1);
        assertThat(fenced.fencer(6).set(key("state"), "third")).isTrue();
        assertThat(setCalls(own) - before).as("SETs after a write above the mark").isEqualTo(3);
        assertThat(template.opsForValue().get(key("state"))).isEqualTo("third");
        assertThat(template.opsForValue().get(key("fence:applied"))).isEqualTo("6");
        // A body that lowers the mark at the mark's own token still gets it restored.
        assertThat(fenced.fencer(6).eval("redis.call('SET', KEYS[1], '0')", List.of())).isTrue();
        assertThat(template.opsForValue().get(key("fence:applied"))).isEqualTo("6");
        // A mark spelt differently is rewritten verbatim from the token, as before.
        template.opsForValue().set(key("fence:applied"), "06");
        assertThat(fenced.fencer(6).set(key("state"), "fourth")).isTrue();
        assertThat(template.opsForValue().get(key("fence:applied"))).isEqualTo("6");
    }

    /** SET calls so far, counting those run inside scripts (INFO commandstats). */
    private static long setCalls(RedisServer server) {
        Matcher calls =
                Pattern.compile("cmdstat_set:calls=(\\d+)").matcher(server.info("commandstats"));
        return calls.find() ? Long.parseLong(calls.group(1)) : 0;
    }

    @Test
    void fenceSetRejectsStaleToken() {
        assertThat(elector.fencer(5).set(key("state"), "new")).isTrue();
        assertThat(elector.fencer(2).set(key("state"), "old")).isFalse();
        assertThat(redis.opsForValue().get(key("state"))).isEqualTo("new");
    }

    @Test
    void nonPositiveTokensAreRejectedWithoutMovingTheMark() {
        assertThat(elector.fencer(0).hset(key("state"), "k", "zero")).isFalse();
        assertThat(redis.hasKey(key("state"))).isFalse();
        assertThat(elector.fencer(-3).set(key("state"), "negative")).isFalse();
        assertThat(elector.fencer(Long.MIN_VALUE).eval(ZADD, List.of(key("z")), "1", "m"))
                .isFalse();
        assertThat(mark()).isNull();
        assertThat(elector.fencer(1).hset(key("state"), "k", "one")).isTrue();
    }

    @Test
    void notLeadingGivesNoFencer() {
        assertThat(elector.fencer()).isEmpty();
        assertThat(elector.token()).isEmpty();
        assertThat(elector.isLeader()).isFalse();
    }

    @Test
    void fenceEvalFencesAnArbitraryWrite() {
        assertThat(elector.fencer(5).eval(ZADD, List.of(key("board")), "100", "alice")).isTrue();
        assertThat(redis.opsForZSet().score(key("board"), "alice")).isEqualTo(100.0);
        assertThat(elector.fencer(3).eval(ZADD, List.of(key("board")), "1", "alice")).isFalse();
        assertThat(redis.opsForZSet().score(key("board"), "alice")).isEqualTo(100.0);
    }

    @Test
    void fenceEvalWithoutKeysOrArgsStillChecksTheToken() {
        String body = "redis.call('INCR', '" + key("counter") + "')";
        assertThat(elector.fencer(2).eval(body, null)).isTrue();
        assertThat(elector.fencer(1).eval(body, List.of())).isFalse();
        assertThat(redis.opsForValue().get(key("counter"))).isEqualTo("1");
    }

    @Test
    void failedBodyDoesNotAdvanceTheMark() {
        redis.opsForValue().set(key("plain"), "x");
        assertThat(elector.fencer(5).set(key("state"), "v")).isTrue();
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> elector.fencer(7).eval(ZADD, List.of(key("plain")), "1", "m"))
                .withStackTraceContaining("WRONGTYPE");
        assertThat(mark()).isEqualTo("5");
        assertThat(elector.fencer(6).set(key("state"), "six")).isTrue();
    }

    @Test
    void wrongTypeTargetOfHSetSurfacesAndDoesNotAdvanceTheMark() {
        redis.opsForValue().set(key("plain"), "x");
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> elector.fencer(9).hset(key("plain"), "f", "v"))
                .withStackTraceContaining("WRONGTYPE");
        assertThat(mark()).isNull();
        assertThat(elector.fencer(1).set(key("state"), "one")).isTrue();
    }

    @Test
    void bodyThatRaisesAnErrorSurfacesItAndDoesNotAdvanceTheMark() {
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> elector.fencer(4).eval("error('broken on purpose')", List.of()));
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> elector.fencer(4).eval("this is not lua", List.of()));
        assertThat(mark()).isNull();
    }

    @Test
    void aReturnInTheBodyCannotSkipTheFence() {
        // A top-level return and a nested one both end only the body: the mark still advances
        // and the write counts as applied (the Go library compiles the first to an error and
        // lets the second skip the mark).
        String topLevel = "redis.call('SET', KEYS[2], ARGV[2])\nreturn 5";
        assertThat(elector.fencer(3).eval(topLevel, List.of(key("a")), "x")).isTrue();
        assertThat(mark()).isEqualTo("3");
        String nested = "if true then return 1 end\nredis.call('SET', KEYS[2], 'unreached')";
        assertThat(elector.fencer(4).eval(nested, List.of(key("b")))).isTrue();
        assertThat(mark()).isEqualTo("4");
        assertThat(redis.hasKey(key("b"))).isFalse();
        assertThat(elector.fencer(3).eval(topLevel, List.of(key("a")), "stale")).isFalse();
    }

    @Test
    void fenceSemanticsEndToEnd() {
        assertThat(elector.fencer(0).set(key("s"), "zero")).isFalse();
        assertThat(elector.fencer(5).set(key("s"), "five")).isTrue();
        assertThat(elector.fencer(3).set(key("s"), "three")).isFalse();
        assertThat(redis.opsForValue().get(key("s"))).isEqualTo("five");
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> elector.fencer(7).eval(ZADD, List.of(key("s")), "1", "m"));
        assertThat(elector.fencer(6).set(key("s"), "six")).isTrue();
        assertThat(Protocols.acquire(elector).token()).isEqualTo(7);
        assertThat(mark()).isEqualTo("7");
    }

    @Test
    void aBodyCannotRewriteTheFencesKeyOrToken() {
        assertThat(elector.fencer(5).set(key("s"), "five")).isTrue();
        // The body edits the tables the fence reads; the fence kept its own copies.
        assertThat(elector.fencer(6).eval("ARGV[1] = '1'", List.of())).isTrue();
        assertThat(mark()).isEqualTo("6");
        assertThat(elector.fencer(6).eval("table.remove(ARGV, 1)", List.of(), "999")).isTrue();
        assertThat(mark()).isEqualTo("6");
        assertThat(elector.fencer(7).eval("KEYS[1] = KEYS[2]", List.of(key("user")))).isTrue();
        assertThat(mark()).isEqualTo("7");
        assertThat(redis.hasKey(key("user"))).isFalse();
        assertThat(elector.fencer(5).set(key("s"), "stale")).isFalse();
    }

    @Test
    void largeTokensAreStoredExactly() {
        assertThat(elector.fencer(1_000_000_000_000_001L).set(key("state"), "v")).isTrue();
        assertThat(mark()).isEqualTo("1000000000000001");
        assertThat(elector.fencer(1_000_000_000_000_000L).set(key("state"), "older")).isFalse();
    }

    @Test
    void tokensFrom2To53AreRefusedBeforeReachingRedis() {
        long limit = 1L << 53;
        assertThat(elector.fencer(limit - 1).set(key("state"), "max")).isTrue();
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(limit).set(key("state"), "x"))
                .withMessageContaining("2^53");
        assertThatIllegalArgumentException().isThrownBy(() -> elector.fencer(Long.MAX_VALUE));
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () -> elector.fencer(limit + 1).eval(ZADD, List.of(key("z")), "1", "m"));
        assertThat(mark()).isEqualTo(Long.toString(limit - 1));
    }

    @Test
    void allFencedWritesShareOneMark() {
        assertThat(elector.fencer(8).eval(ZADD, List.of(key("z")), "1", "m")).isTrue();
        assertThat(elector.fencer(7).set(key("s"), "v")).isFalse();
        assertThat(elector.fencer(7).hset(key("h"), "f", "v")).isFalse();
    }

    @Test
    void fencerBindsItsTokenToWrites() {
        Fencer five = elector.fencer(5);
        assertThat(five.token()).isEqualTo(5);
        assertThat(five.hset(key("h"), "f", "five")).isTrue();
        assertThat(five.set(key("s"), "five")).isTrue();
        assertThat(five.eval(ZADD, List.of(key("z")), "5", "five")).isTrue();

        assertThat(elector.fencer(6).hset(key("h"), "f", "newer")).isTrue();

        assertThat(five.hset(key("h"), "f", "stale")).isFalse();
        assertThat(five.set(key("s"), "stale")).isFalse();
        assertThat(five.eval(ZADD, List.of(key("z")), "9", "stale")).isFalse();
        assertThat(redis.opsForHash().get(key("h"), "f")).isEqualTo("newer");
        assertThat(five).isEqualTo(elector.fencer(5)).isNotEqualTo(elector.fencer(6));
    }

    @Test
    void theEvalBodyCacheIsCappedAndCachedBodiesKeepWorking() {
        for (int i = 0; i < TooManyEvalBodiesException.CAP; i++) {
            assertThat(
                            elector.fencer(1)
                                    .eval(
                                            "redis.call('SET', KEYS[2], '" + i + "')",
                                            List.of(key("c"))))
                    .isTrue();
        }
        long writesBefore = recorder.count("applied") + recorder.count("rejected");
        assertThatExceptionOfType(TooManyEvalBodiesException.class)
                .isThrownBy(
                        () ->
                                elector.fencer(1)
                                        .eval(
                                                "redis.call('SET', KEYS[2], 'new')",
                                                List.of(key("c"))))
                .withMessage(
                        "redlease: too many distinct FenceEval bodies; keep bodies constant and pass"
                                + " variable data through writeKeys and args (cap 256)");
        assertThat(recorder.count("applied") + recorder.count("rejected")).isEqualTo(writesBefore);
        assertThat(redis.opsForValue().get(key("c"))).isEqualTo("255");
        assertThat(elector.fencer(1).eval("redis.call('SET', KEYS[2], '0')", List.of(key("c"))))
                .isTrue();
        assertThat(redis.opsForValue().get(key("c"))).isEqualTo("0");
    }

    @Test
    void scriptFlushDuringFencedWritesIsInvisibleToCallers() {
        for (int round = 0; round < 20; round++) {
            assertThat(elector.fencer(1).set(key("s"), "v" + round)).isTrue();
            assertThat(elector.fencer(1).eval(ZADD, List.of(key("z")), "1", "m")).isTrue();
            server.scriptFlush();
        }
        assertThat(redis.opsForValue().get(key("s"))).isEqualTo("v19");
    }

    @Test
    void theThrowingFormsReturnWhenAppliedAndThrowWhenRefused() {
        Fencer five = elector.fencer(5);
        five.setOrThrow(key("s"), "five");
        five.hsetOrThrow(key("h"), "f", "five");
        five.evalOrThrow(ZADD, List.of(key("z")), "5", "five");
        assertThat(redis.opsForValue().get(key("s"))).isEqualTo("five");
        Fencer three = elector.fencer(3);
        for (Runnable refused :
                List.<Runnable>of(
                        () -> three.setOrThrow(key("s"), "three"),
                        () -> three.hsetOrThrow(key("h"), "f", "three"),
                        () -> three.evalOrThrow(ZADD, List.of(key("z")), "3", "three"))) {
            assertThatExceptionOfType(FenceRefusedException.class)
                    .isThrownBy(refused::run)
                    .isInstanceOf(NotLeaderException.class)
                    .withMessageContaining("token 3 of '" + name + "'")
                    .withMessageContaining("a newer term exists")
                    .withMessageContaining("was not applied")
                    .withMessageContaining("retrying with this token cannot succeed")
                    .satisfies(
                            ex -> {
                                assertThat(ex.token()).isEqualTo(3);
                                assertThat(ex.election()).isEqualTo(name);
                            });
        }
        assertThat(redis.opsForValue().get(key("s"))).isEqualTo("five");
        assertThat(recorder.kinds())
                .containsExactly(
                        "applied", "applied", "applied", "rejected", "rejected", "rejected");
    }

    @Test
    void theReactiveThrowingFormsCompleteWhenAppliedAndFailWhenRefused() {
        ReactiveFencer five = elector.reactiveFencer(5);
        assertThat(five.setOrThrow(key("s"), "five").block()).isNull();
        assertThat(five.hsetOrThrow(key("h"), "f", "five").block()).isNull();
        assertThat(five.evalOrThrow(ZADD, List.of(key("z")), "5", "five").block()).isNull();
        ReactiveFencer three = elector.reactiveFencer(3);
        assertThatExceptionOfType(FenceRefusedException.class)
                .isThrownBy(() -> three.setOrThrow(key("s"), "three").block())
                .satisfies(ex -> assertThat(ex.token()).isEqualTo(3));
        assertThatExceptionOfType(FenceRefusedException.class)
                .isThrownBy(() -> three.hsetOrThrow(key("h"), "f", "three").block());
        assertThatExceptionOfType(FenceRefusedException.class)
                .isThrownBy(() -> three.evalOrThrow(ZADD, List.of(key("z")), "3", "x").block());
        assertThat(redis.opsForValue().get(key("s"))).isEqualTo("five");
    }

    @Test
    void observersSeeEveryVerdict() {
        elector.fencer(2).set(key("s"), "v");
        elector.fencer(1).set(key("s"), "v");
        elector.fencer(0).set(key("s"), "v");
        assertThat(recorder.kinds()).containsExactly("applied", "rejected", "rejected");
    }

    @Test
    void aThrowingObserverDoesNotBreakAFencedWrite() {
        AtomicInteger calls = new AtomicInteger();
        Elector noisy =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .observer(
                                        new Observer() {
                                            @Override
                                            public void onFencedWrite(boolean applied) {
                                                calls.incrementAndGet();
                                                throw new IllegalStateException("observer bug");
                                            }
                                        })
                                .observer(recorder)
                                .build());
        assertThat(noisy.fencer(1).set(key("s"), "v")).isTrue();
        assertThat(calls).hasValue(1);
        assertThat(recorder.kinds()).containsExactly("applied");
    }

    @Test
    void nullArgumentsAreRejectedByName() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).set(null, "v"))
                .withMessage("redlease: key must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).set(key("k"), null))
                .withMessage("redlease: value must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).hset(key("k"), null, "v"))
                .withMessage("redlease: field must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).eval(" ", List.of()))
                .withMessage("redlease: body must not be null or blank");
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () -> elector.fencer(1).eval(ZADD, java.util.Arrays.asList(key("k"), null)))
                .withMessage("redlease: keys element must not be null");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).eval(ZADD, List.of(key("k")), "a", null))
                .withMessage("redlease: args element must not be null");
        assertThat(mark()).isNull();
    }

    @Test
    void templateWhoseKeysAreNotPlainStringsIsRejected() {
        org.springframework.data.redis.core.RedisTemplate<String, String> json =
                new org.springframework.data.redis.core.RedisTemplate<>();
        json.setConnectionFactory(redis.getConnectionFactory());
        json.afterPropertiesSet();
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new Elector(json, ElectorConfig.builder(name).build()))
                .withMessageContaining("key serializer");
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () ->
                                new Elector(
                                        (StringRedisTemplate) null,
                                        ElectorConfig.builder(name).build()))
                .withMessage("redlease: nil client");
    }

    @Test
    void aValueSerializerOtherThanStringsDoesNotChangeTheWireFormat() {
        org.springframework.data.redis.core.RedisTemplate<String, String> template =
                new org.springframework.data.redis.core.RedisTemplate<>();
        template.setConnectionFactory(redis.getConnectionFactory());
        template.setKeySerializer(
                org.springframework.data.redis.serializer.RedisSerializer.string());
        template.afterPropertiesSet(); // JDK serialization for values
        Elector jdk = new Elector(template, ElectorConfig.builder(name).instanceId("j").build());
        long token = Protocols.acquire(jdk).token();
        assertThat(token).isEqualTo(1);
        assertThat(redis.opsForValue().get(key("leader"))).isEqualTo("j");
        assertThat(jdk.fencer(token).set(key("s"), "plain")).isTrue();
        assertThat(redis.opsForValue().get(key("s"))).isEqualTo("plain");
        assertThat(mark()).isEqualTo("1");
    }
}
