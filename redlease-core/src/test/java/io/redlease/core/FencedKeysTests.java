package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.redlease.core.InvalidElectorConfigException.Setting;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A fence guards its own election's keys only: a fenced write naming a key outside the election's
 * namespace (its name's hash tag, else the {@code <name>:} prefix, plus the declared prefixes), or
 * one of the election's own keys, is refused before any Redis call, naming the key, the election
 * and the rule.
 */
@ExtendWith(RedisExtension.class)
class FencedKeysTests {

    private final Templates templates = new Templates();

    private StringRedisTemplate redis;

    private String unique;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        // Opens the shared connection: a write with a token that is no term of this instance
        // waits one TTL for its reply, connecting a cold JVM included.
        redis.hasKey("warm-up");
        this.unique = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        templates.close();
    }

    private Elector elector(String name, String... prefixes) {
        return new Elector(redis, ElectorConfig.builder(name).fencedKeyPrefixes(prefixes).build());
    }

    /**
     * An elector on a port nothing listens on: any Redis call would fail with a connection error.
     */
    private Elector unreachable(String name) throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        StringRedisTemplate nowhere = templates.on("127.0.0.1", port, null, Duration.ofSeconds(1));
        return new Elector(nowhere, ElectorConfig.builder(name).build());
    }

    @Test
    void aNameWithoutAHashTagOwnsTheKeysThatStartWithItAndAColon() {
        Elector elector = elector(unique);
        Fencer fencer = elector.fencer(1);
        assertThat(fencer.set(unique + ":state", "v")).isTrue();
        assertThat(fencer.hset(unique + ":hash", "f", "v")).isTrue();
        assertThat(fencer.eval("redis.call('SET', KEYS[2], 'v')", List.of(unique + ":other")))
                .isTrue();
        for (String outside : List.of("state", unique, unique + "state", "x:" + unique + ":s")) {
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> fencer.set(outside, "v"))
                    .withMessageContaining("'" + outside + "'")
                    .withMessageContaining("'" + unique + "'")
                    .withMessageContaining("starting with '" + unique + ":'")
                    .withMessageContaining("a fence guards its own election's keys only");
            assertThat(redis.hasKey(outside)).isFalse();
        }
    }

    @Test
    void aNameWithAHashTagOwnsTheKeysWithThatTag() {
        String tag = unique + "-orders";
        String name = "app:{" + tag + "}:main";
        Fencer fencer = elector(name).fencer(1);
        assertThat(fencer.set("{" + tag + "}:state", "v")).isTrue();
        assertThat(fencer.set(name + ":state", "v")).isTrue();
        assertThat(fencer.set("report:{" + tag + "}", "v")).isTrue();
        for (String outside :
                List.of(tag + ":state", "{" + tag + "-other}:s", "{}{" + tag + "}:s", "{x}")) {
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> fencer.hset(outside, "f", "v"))
                    .withMessageContaining("'" + outside + "'")
                    .withMessageContaining("with the hash tag {" + tag + "}");
        }
    }

    @Test
    void everyKeyOfAFencedEvalIsChecked() {
        Fencer fencer = elector(unique).fencer(1);
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () ->
                                fencer.eval(
                                        "redis.call('SET', KEYS[2], 'v') redis.call('SET',"
                                                + " KEYS[3], 'v')",
                                        List.of(unique + ":inside", "elsewhere")))
                .withMessageContaining("'elsewhere'");
        assertThat(redis.hasKey(unique + ":inside")).isFalse();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "leader",
                "fence",
                "fence:applied",
                "leader:info",
                "candidates",
                "slots:nightly-report"
            })
    void theElectionsOwnKeysAreRefused(String suffix) {
        String key = unique + ":" + suffix;
        Fencer fencer = elector(unique, unique).fencer(1);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> fencer.set(key, "v"))
                .withMessageContaining("'" + key + "'")
                .withMessageContaining("reserved");
        assertThatIllegalArgumentException().isThrownBy(() -> fencer.hset(key, "f", "v"));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> fencer.eval("return 1", List.of(unique + ":ok", key)));
        assertThat(redis.hasKey(key)).isFalse();
    }

    @Test
    void declaredPrefixesAreAllowedAsWell() {
        String name = unique;
        String prefix = unique + "-jobs:";
        // tag::fenced-key-prefixes[]
        ElectorConfig config = ElectorConfig.builder(name).fencedKeyPrefixes(prefix).build();
        // end::fenced-key-prefixes[]
        Fencer fencer = new Elector(redis, config).fencer(1);
        assertThat(fencer.set(prefix + "report", "v")).isTrue();
        assertThat(redis.opsForValue().get(prefix + "report")).isEqualTo("v");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> fencer.set(unique + "-job:report", "v"))
                .withMessageContaining("or starting with one of [" + prefix + "]");
    }

    @Test
    void anEmptyPrefixIsRejectedNamingTheSetting() {
        assertThatExceptionOfType(InvalidElectorConfigException.class)
                .isThrownBy(() -> ElectorConfig.builder(unique).fencedKeyPrefixes("jobs:", ""))
                .satisfies(ex -> assertThat(ex.setting()).isEqualTo(Setting.FENCED_KEY_PREFIXES))
                .withMessageContaining("fencedKeyPrefixes");
    }

    @Test
    void theCheckComesBeforeAnyRedisCall() throws IOException {
        Elector elector = unreachable(unique);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).set("elsewhere", "v"));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> elector.fencer(1).eval("return 1", List.of("elsewhere")));
    }

    @Test
    void theReactiveFencerAppliesTheSameRule() {
        Elector elector = elector(unique);
        ReactiveFencer fencer = elector.reactiveFencer(1);
        assertThat(fencer.set(unique + ":state", "v").block()).isTrue();
        assertThatIllegalArgumentException()
                .isThrownBy(() -> fencer.set("elsewhere", "v"))
                .withMessageContaining("'elsewhere'");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> fencer.eval("return 1", List.of(unique + ":leader")));
    }

    @Test
    void aPartitionsFencerAcceptsOnlyKeysWithItsPartitionsTag() {
        PartitionedElection orders =
                new PartitionedElection(
                        redis, PartitionedElectionConfig.builder(unique, 2).build());
        String p0 = orders.electionName(0);
        assertThat(p0).isEqualTo("{" + unique + ":p0}");
        Fencer fencer = orders.fencer(0, 1);
        assertThat(fencer.set(p0 + ":sync", "v")).isTrue();
        for (String outside :
                List.of(orders.electionName(1) + ":sync", unique + ":sync", "{" + unique + "}:s")) {
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> fencer.set(outside, "v"))
                    .withMessageContaining("with the hash tag {" + unique + ":p0}");
        }
    }
}
