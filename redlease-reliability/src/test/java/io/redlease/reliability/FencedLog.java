package io.redlease.reliability;

import io.redlease.core.Fencer;
import java.util.ArrayList;
import java.util.List;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The resource the workload writes: a Redis list {@code <name>:log} to which every applied write
 * appends {@code token:seq:counter:candidate} in the same script as the fence check, where {@code
 * counter} is the election's token counter ({@code <name>:fence}) read at the moment the write was
 * applied. The list is the ground truth of which writes were applied, in which order, and how many
 * terms had been elected by then. All keys share the name, so a hash-tagged name keeps them in one
 * Cluster slot. The counter is the election's own key, which a fenced write may not name: the body
 * reads it by a name passed as an argument (an undeclared key of the same slot), for this check
 * only.
 */
final class FencedLog {

    /**
     * The write, as a fenced-eval body: KEYS[2] the log, ARGV[1] the token (the fence's), ARGV[2]
     * the sequence number, ARGV[3] the candidate, ARGV[4] the name of the token counter (read
     * only).
     */
    static final String BODY =
            "redis.call('RPUSH', KEYS[2], ARGV[1] .. ':' .. ARGV[2] .. ':' .."
                    + " (redis.call('GET', ARGV[4]) or '0') .. ':' .. ARGV[3])";

    /** The same write without the fence: what the mutant run sends. */
    private static final RedisScript<Long> UNFENCED =
            RedisScript.of("local function write() " + BODY + " end write() return 1", Long.class);

    /** One entry of the log. */
    record Entry(long token, long seq, long counter, String candidate, int index) {}

    private final String name;

    FencedLog(String name) {
        this.name = name;
    }

    String key() {
        return name + ":log";
    }

    String counterKey() {
        return name + ":fence";
    }

    String markKey() {
        return name + ":fence:applied";
    }

    List<String> keys() {
        return List.of(key());
    }

    /** Appends through the fence; returns whether the fence accepted the token. */
    boolean fenced(Fencer fencer, long seq, String candidate) {
        return fencer.eval(BODY, keys(), Long.toString(seq), candidate, counterKey());
    }

    /** Appends without the fence (the mutant): always applied. */
    boolean unfenced(StringRedisTemplate redis, long token, long seq, String candidate) {
        Long reply =
                redis.execute(
                        UNFENCED,
                        List.of(markKey(), key()),
                        Long.toString(token),
                        Long.toString(seq),
                        candidate,
                        counterKey());
        return reply != null && reply == 1L;
    }

    /** The counter as read by the write; -1 when it was not a number (a broken-key scenario). */
    private static long counter(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException ex) {
            return -1;
        }
    }

    /** Reads the whole log, in the order the writes were applied. */
    List<Entry> read(StringRedisTemplate redis) {
        List<String> raw = redis.opsForList().range(key(), 0, -1);
        List<Entry> entries = new ArrayList<>();
        if (raw == null) {
            return entries;
        }
        for (int i = 0; i < raw.size(); i++) {
            String[] parts = raw.get(i).split(":", 4);
            entries.add(
                    new Entry(
                            Long.parseLong(parts[0]),
                            Long.parseLong(parts[1]),
                            counter(parts[2]),
                            parts[3],
                            i));
        }
        return entries;
    }
}
