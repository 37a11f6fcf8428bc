package io.redlease.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Tells redlease's own background Redis traffic apart from the application's: the scripts of
 * acquires, renewals, releases, heartbeats, leader information, partition membership, ledger claims
 * and the ledger reads of once-per-slot scheduling, the balancing's read of the partitions' lease
 * keys, and the subscription to release notifications. A traced client's observation of such a
 * command (Lettuce's, in a Spring Boot application) can be declined with it, so that redlease's
 * background work starts no trace of its own.
 *
 * <p>Fenced writes (and a once-per-slot run's mark) are not the engine's: they belong to the work
 * that makes them. Reads an application asks for (the holder, the leader's information, a ledger)
 * are not either.
 */
public final class EngineTraffic {

    private static final List<RedisScript<?>> ENGINE_SCRIPTS =
            List.of(
                    Scripts.ACQUIRE,
                    Scripts.ACQUIRE_PREFERRING,
                    Scripts.RENEW,
                    Scripts.RELEASE,
                    Scripts.SLOT_CLAIM,
                    Scripts.SLOT_READ,
                    Scripts.LEADER_INFO_PUBLISH,
                    Scripts.LEADER_INFO_REFRESH,
                    Scripts.LEADER_INFO_REMOVE,
                    Scripts.CANDIDATE_HEARTBEAT,
                    Scripts.CANDIDATE_REMOVE,
                    RedisScript.of(load("partition/members.lua")));

    private static final String LEASE_KEY_SUFFIX = ":leader";

    private static final Set<String> SHAS = new HashSet<>();

    private static final Set<String> BODIES = new HashSet<>();

    static {
        for (RedisScript<?> script : ENGINE_SCRIPTS) {
            SHAS.add(script.getSha1());
            BODIES.add(script.getScriptAsString());
        }
    }

    private EngineTraffic() {}

    /**
     * Returns whether the first argument of an {@code EVALSHA} (a SHA-1) or an {@code EVAL} (a
     * script) is one of the engine's scripts.
     */
    public static boolean isEngineScript(String shaOrScript) {
        return SHAS.contains(shaOrScript) || BODIES.contains(shaOrScript);
    }

    /**
     * Returns whether an {@code MGET} of these keys is the read of a partitioned election's lease
     * keys ({@code <name>:leader}) that its balancing makes each round.
     */
    public static boolean isEngineRead(List<String> keys) {
        if (keys.isEmpty()) {
            return false;
        }
        for (String key : keys) {
            if (!key.endsWith(LEASE_KEY_SUFFIX)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Returns whether a channel is one of the release-notification channels redlease subscribes.
     */
    public static boolean isEngineChannel(String channel) {
        return channel.endsWith(":released");
    }

    private static String load(String name) {
        try (InputStream in = EngineTraffic.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("redlease: script " + name + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
