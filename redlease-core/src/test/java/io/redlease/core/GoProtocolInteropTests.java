package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.RespClient;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Java electors and a peer speaking the Go library's protocol (written from its behavioural
 * specification, with raw commands) contend for one name: keys, tokens and fencing agree.
 */
@ExtendWith(RedisExtension.class)
class GoProtocolInteropTests {

    private final Templates templates = new Templates();

    private StringRedisTemplate redis;

    private RedisServer server;

    private String name;

    private GoPeer go;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = templates.on(server);
        this.name = Names.unique(info);
        this.go = new GoPeer(server.client(), name, "go-1", 2000);
    }

    @AfterEach
    void tearDown() {
        go.close();
        templates.close();
    }

    private Elector java(String id, Recorder recorder) {
        return new Elector(
                redis,
                ElectorConfig.builder(name)
                        .ttl(Duration.ofSeconds(2))
                        .renewInterval(Duration.ofMillis(50))
                        .acquireInterval(Duration.ofMillis(50))
                        .instanceId(id)
                        .observer(recorder)
                        .build());
    }

    @Test
    void goLeaderThenJavaSuccessorFencesTheGoTerm() {
        long goToken = go.acquire();
        assertThat(goToken).isEqualTo(1);
        assertThat(go.fenceSet(goToken, name + ":state", "from-go")).isEqualTo(1);

        Recorder recorder = new Recorder();
        try (Elector a = java("java-a", recorder)) {
            a.start();
            recorder.await("follower", 1);
            assertThat(go.renew()).isEqualTo(1);
            go.release();
            long javaToken = recorder.await("elected", 1).token();
            assertThat(javaToken).isEqualTo(2);

            assertThat(go.fenceSet(goToken, name + ":state", "stale-go")).isZero();
            assertThat(a.fencer().orElseThrow().set(name + ":state", "from-java")).isTrue();
            assertThat(redis.opsForValue().get(name + ":state")).isEqualTo("from-java");
            assertThat(go.acquire()).isZero();
            assertThat(redis.opsForValue().get(name + ":leader")).isEqualTo("java-a");
        }
    }

    @Test
    void javaLeaderThenGoSuccessorFencesTheJavaTerm() {
        Recorder recorder = new Recorder();
        Elector elector = java("java-a", recorder);
        elector.start(Term::awaitEnd);
        long javaToken = recorder.await("elected", 1).token();
        Fencer javaFencer = elector.fencer().orElseThrow();
        assertThat(go.acquire()).isZero();
        assertThat(go.renew()).isZero();
        elector.stop();

        long goToken = go.acquire();
        assertThat(goToken).isGreaterThan(javaToken);
        assertThat(redis.opsForValue().get(name + ":fence:applied"))
                .isEqualTo(Long.toString(goToken));
        assertThat(javaFencer.set(name + ":state", "stale-java")).isFalse();
        assertThat(go.fenceSet(goToken, name + ":state", "from-go")).isEqualTo(1);
        assertThat(redis.keys(name + "*"))
                .isEqualTo(
                        Set.of(
                                name + ":leader",
                                name + ":fence",
                                name + ":fence:applied",
                                name + ":state"));
    }

    @Test
    void fencedWritesOfBothShareOneMark() {
        Elector elector = java("java-a", new Recorder());
        assertThat(go.fenceSet(7, name + ":s", "go")).isEqualTo(1);
        assertThat(elector.fencer(6).set(name + ":s", "java")).isFalse();
        assertThat(elector.fencer(8).set(name + ":s", "java")).isTrue();
        assertThat(go.fenceSet(7, name + ":s", "go")).isZero();
        assertThat(go.acquire()).isEqualTo(9);
    }

    /**
     * The Go library's side of the protocol, from its specification (§2): integer replies, no
     * notification on release.
     */
    static final class GoPeer implements AutoCloseable {

        private static final String ACQUIRE =
                """
                local function elect()
                    local applied = redis.call('GET', KEYS[3])
                    local counter = redis.call('GET', KEYS[2]) or '0'
                    if applied and tonumber(applied) > tonumber(counter) then
                        redis.call('SET', KEYS[2], applied)
                    end
                    local token = redis.call('INCR', KEYS[2])
                    redis.call('SET', KEYS[3], redis.call('GET', KEYS[2]))
                    return token
                end
                if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
                    return elect()
                elseif redis.call('GET', KEYS[1]) == ARGV[1] then
                    redis.call('PEXPIRE', KEYS[1], ARGV[2])
                    return elect()
                end
                return 0
                """;

        private static final String RENEW =
                """
                if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
                return redis.call('PEXPIRE', KEYS[1], ARGV[2])
                """;

        private static final String RELEASE =
                """
                if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
                return redis.call('DEL', KEYS[1])
                """;

        private static final String FENCE_SET =
                """
                local t = tonumber(ARGV[1])
                local m = redis.call('GET', KEYS[1])
                if t < 1 or (m and t < tonumber(m)) then return 0 end
                redis.call('SET', KEYS[2], ARGV[2])
                redis.call('SET', KEYS[1], ARGV[1])
                return 1
                """;

        private final RespClient client;

        private final String name;

        private final String id;

        private final String ttlMillis;

        GoPeer(RespClient client, String name, String id, long ttlMillis) {
            this.client = client;
            this.name = name;
            this.id = id;
            this.ttlMillis = Long.toString(ttlMillis);
        }

        long acquire() {
            return (Long)
                    client.command(
                            "EVAL",
                            ACQUIRE,
                            "3",
                            name + ":leader",
                            name + ":fence",
                            name + ":fence:applied",
                            id,
                            ttlMillis);
        }

        long renew() {
            return (Long) client.command("EVAL", RENEW, "1", name + ":leader", id, ttlMillis);
        }

        long release() {
            return (Long) client.command("EVAL", RELEASE, "1", name + ":leader", id);
        }

        long fenceSet(long token, String key, String value) {
            return (Long)
                    client.command(
                            "EVAL",
                            FENCE_SET,
                            "2",
                            name + ":fence:applied",
                            key,
                            Long.toString(token),
                            value);
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
