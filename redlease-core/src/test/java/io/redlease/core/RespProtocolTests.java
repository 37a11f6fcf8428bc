package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.protocol.ProtocolVersion;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The election over both protocols Redis speaks. Scripts that return Lua {@code false} (the holder
 * read of a free lease, a preference heartbeat that finds no other candidate) reach the client as
 * RESP2's null bulk string or RESP3's null: the elector reads both as "nothing". And the templates
 * of this module's tests speak what {@code -Dredlease.test.resp} asks for, which the compatibility
 * matrix's {@code resp2} leg relies on.
 */
@ExtendWith(RedisExtension.class)
class RespProtocolTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    /** Returns the protocol version of the template's connection, as Redis reports it. */
    private static int resp(StringRedisTemplate redis) {
        Object info =
                redis.execute(
                        (RedisCallback<Object>)
                                connection -> execute(connection, "CLIENT", "INFO"));
        String text =
                info instanceof byte[] bytes
                        ? new String(bytes, StandardCharsets.UTF_8)
                        : String.valueOf(info);
        for (String field : text.strip().split(" ")) {
            if (field.startsWith("resp=")) {
                return Integer.parseInt(field.substring("resp=".length()));
            }
        }
        throw new IllegalStateException("CLIENT INFO has no resp field: " + text);
    }

    private static Object execute(RedisConnection connection, String command, String... args) {
        byte[][] bytes = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            bytes[i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        return connection.execute(command, bytes);
    }

    @Test
    void theTemplatesSpeakTheRequestedProtocol(RedisServer server) {
        ProtocolVersion requested = Templates.requestedProtocol();
        int expected = requested == ProtocolVersion.RESP2 ? 2 : 3;
        assertThat(resp(templates.on(server)))
                .as("-D%s=%s", Templates.RESP_PROPERTY, System.getProperty(Templates.RESP_PROPERTY))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @EnumSource(
            value = ProtocolVersion.class,
            names = {"RESP2", "RESP3"})
    void aFalseReplyReadsAsNothingInBothProtocols(
            ProtocolVersion protocol, RedisServer server, TestInfo info) {
        StringRedisTemplate redis = templates.speaking(server, protocol);
        assertThat(resp(redis)).isEqualTo(protocol == ProtocolVersion.RESP2 ? 2 : 3);
        String name = Names.unique(info) + "-" + protocol;
        // holder.lua replies {false, -2} for a free lease.
        Elector reader = elector(redis, name, "reader", null);
        assertThat(reader.holder()).isEmpty();

        // A lone preferred leader's heartbeat finds no other candidate: false, so it keeps the
        // lease; a higher-ranked candidate's rank then makes it hand over.
        Elector low = elector(redis, name, "low", Preference.priority(1));
        low.start();
        await().until(low::isLeader);
        long token = low.token().orElseThrow();
        Elector high = elector(redis, name, "high", Preference.priority(2));
        assertThat(reader.holder())
                .hasValueSatisfying(holder -> assertThat(holder.instanceId()).isEqualTo("low"));
        await().during(Duration.ofMillis(600))
                .atMost(Duration.ofSeconds(5))
                .until(() -> low.token().orElse(0) == token);
        high.start();
        await().atMost(Duration.ofSeconds(10)).until(high::isLeader);
    }

    private Elector elector(
            StringRedisTemplate redis, String name, String id, Preference preference) {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(2))
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(200))
                                .instanceId(id)
                                .build());
        if (preference != null) {
            elector.prefer(preference, null);
        }
        electors.add(elector);
        return elector;
    }
}
