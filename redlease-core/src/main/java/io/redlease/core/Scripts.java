package io.redlease.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts that define the wire protocol, loaded once from {@code .lua} resources.
 *
 * <p>Keys and semantics match the Go library, so Go and Java instances can contend for the same
 * name; the script texts are our own.
 */
final class Scripts {

    /** Placeholder in {@code fence.lua} that a fenced write's own Lua replaces. */
    private static final String WRITE_PLACEHOLDER = "--[[write]]";

    private static final String FENCE_TEMPLATE = load("fence.lua");

    private static final String INLINE_FENCE_TEMPLATE = load("fence-inline.lua");

    @SuppressWarnings("unchecked")
    private static final Class<List<Object>> LIST = (Class<List<Object>>) (Class<?>) List.class;

    static final RedisScript<List<Object>> ACQUIRE =
            new FixedScript<>(fixed(3, 2) + load("acquire.lua"), LIST);

    static final RedisScript<Long> RENEW = new FixedScript<>(load("renew.lua"), Long.class);

    static final RedisScript<Long> RELEASE = new FixedScript<>(load("release.lua"), Long.class);

    static final RedisScript<List<Object>> HOLDER = new FixedScript<>(load("holder.lua"), LIST);

    static final RedisScript<List<Object>> READ_HASH =
            new FixedScript<>(load("read-hash.lua"), LIST);

    static final RedisScript<List<Object>> SLOT_READ =
            new FixedScript<>(load("slot-read.lua"), LIST);

    static final RedisScript<List<Object>> SLOT_CLAIM =
            new FixedScript<>(load("slot-claim.lua"), LIST);

    static final RedisScript<Long> SLOT_MARK = new FixedScript<>(load("slot-mark.lua"), Long.class);

    static final RedisScript<Long> SLOT_PAUSE =
            new FixedScript<>(load("slot-pause.lua"), Long.class);

    static final RedisScript<Long> LEADER_INFO_PUBLISH =
            new FixedScript<>(load("leader-info-publish.lua"), Long.class);

    static final RedisScript<Long> LEADER_INFO_REFRESH =
            new FixedScript<>(load("leader-info-refresh.lua"), Long.class);

    static final RedisScript<Long> LEADER_INFO_REMOVE =
            new FixedScript<>(load("leader-info-remove.lua"), Long.class);

    static final RedisScript<List<Object>> LEADER_INFO_READ =
            new FixedScript<>(load("leader-info-read.lua"), LIST);

    static final RedisScript<List<Object>> ACQUIRE_PREFERRING =
            new FixedScript<>(
                    fixed(4, 3) + load("acquire-preferring.lua") + load("acquire.lua"), LIST);

    static final RedisScript<String> CANDIDATE_HEARTBEAT =
            new FixedScript<>(load("candidate-heartbeat.lua"), String.class);

    static final RedisScript<Long> CANDIDATE_REMOVE =
            new FixedScript<>(load("candidate-remove.lua"), Long.class);

    static final RedisScript<Long> FENCE_SET = inline("redis.call('SET', KEYS[2], ARGV[2])");

    static final RedisScript<Long> FENCE_HSET =
            inline("redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])");

    private Scripts() {}

    /**
     * Wraps a write in the fence: the token check before it, the mark advance after it.
     *
     * <p>The write runs inside a Lua function, so a {@code return} in it ends only the write and
     * the mark still advances: the fence's epilogue cannot be skipped.
     */
    static RedisScript<Long> fenced(String write) {
        return new FixedScript<>(FENCE_TEMPLATE.replace(WRITE_PLACEHOLDER, write), Long.class);
    }

    /**
     * Inlines a single-command write into the lean fence, for writes that cannot touch the mark:
     * the caller has checked that the written key is not the mark.
     */
    private static RedisScript<Long> inline(String write) {
        return new FixedScript<>(
                INLINE_FENCE_TEMPLATE.replace(WRITE_PLACEHOLDER, write), Long.class);
    }

    /** Declares how many keys and arguments an acquire takes before the optional metadata. */
    private static String fixed(int keys, int args) {
        return "local FIXED_KEYS, FIXED_ARGS = " + keys + ", " + args + "\n";
    }

    private static String load(String name) {
        try (InputStream in = Scripts.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("redlease: script resource missing: " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException("redlease: cannot read script " + name, ex);
        }
    }
}
