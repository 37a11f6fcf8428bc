package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The oldest Redis redlease supports, {@link #FLOOR}, checked against the server's own {@code
 * COMMAND DOCS}: every command the scripts call and the Java code sends, and every option the
 * scripts pass, is no newer than the floor; and a script that reads the clock before it writes asks
 * for effects replication, which servers before 5.0 (and 5.x/6.x with {@code lua-replicate-commands
 * no}) need. The documentation's "Supported Redis servers" states the same floor.
 */
@ExtendWith(RedisExtension.class)
class SupportedServerTests {

    /** The oldest Redis version redlease supports. */
    static final String FLOOR = "6.0.0";

    /**
     * Commands the Java code sends outside scripts, with where. Lettuce's own handshake ({@code
     * HELLO}, {@code AUTH}, {@code SELECT}) is the client's: it falls back to RESP2 without {@code
     * HELLO}.
     */
    static final Map<String, String> JAVA_COMMANDS =
            Map.of(
                    "evalsha", "every script (ScriptRunner, Spring Data Redis' script executor)",
                    "eval", "a script the server has not cached yet (after NOSCRIPT)",
                    "mget", "partition.Balancer: the partitions' lease holders, at once",
                    "get", "partition.PartitionHolders: each partition's token counter",
                    "wait", "LeaseProtocol: replica acknowledgement (only when configured)",
                    "subscribe", "ReleaseNotifications: the release channels",
                    "unsubscribe", "ReleaseNotifications: an election that stops",
                    "ping", "Spring Data Redis' subscription, when it closes",
                    "hello", "Lettuce's connection handshake, for RESP3");

    /** Scripts outside {@link Scripts}, as resources. */
    private static final List<String> OTHER_SCRIPTS = List.of("partition/members.lua");

    private static final Pattern CALL =
            Pattern.compile("redis\\.p?call\\(\\s*'([A-Za-z]+)'([^\\n]*)");

    private static final Pattern LITERAL = Pattern.compile("'([A-Za-z][A-Za-z-]*)'");

    @Test
    void everyCommandAndOptionRedleaseSendsIsNoNewerThanTheFloor(RedisServer server)
            throws Exception {
        Map<String, Set<String>> used = new TreeMap<>();
        for (String script : scripts().values()) {
            Matcher call = CALL.matcher(script);
            while (call.find()) {
                Set<String> literals =
                        used.computeIfAbsent(
                                call.group(1).toLowerCase(Locale.ROOT), c -> new TreeSet<>());
                // The literals up to the next call on the line: options such as NX and PX.
                String rest = call.group(2);
                int next = rest.indexOf("redis.");
                Matcher literal = LITERAL.matcher(next < 0 ? rest : rest.substring(0, next));
                while (literal.find()) {
                    literals.add(literal.group(1).toUpperCase(Locale.ROOT));
                }
            }
        }
        JAVA_COMMANDS.keySet().forEach(command -> used.putIfAbsent(command, new TreeSet<>()));
        List<String> newer = new ArrayList<>();
        List<String> table = new ArrayList<>();
        for (Map.Entry<String, Set<String>> entry : used.entrySet()) {
            Map<String, Object> docs = docs(server, entry.getKey());
            String since = String.valueOf(docs.get("since"));
            if (compare(since, FLOOR) > 0) {
                newer.add(entry.getKey() + " (since " + since + ")");
            }
            Map<String, String> tokens = new TreeMap<>();
            collectTokens(docs.get("arguments"), tokens);
            for (String literal : entry.getValue()) {
                String tokenSince = tokens.get(literal);
                if (tokenSince != null && compare(tokenSince, FLOOR) > 0) {
                    newer.add(entry.getKey() + " " + literal + " (since " + tokenSince + ")");
                }
            }
            table.add(
                    entry.getKey()
                            + " since "
                            + since
                            + (entry.getValue().isEmpty() ? "" : ", options " + entry.getValue())
                            + historyAfterFloor(docs));
        }
        table.forEach(line -> System.out.println("[redlease] COMMAND DOCS: " + line));
        assertThat(used).containsKeys("eval", "evalsha", "get", "set", "time", "zrange");
        assertThat(newer).as("commands and options newer than Redis " + FLOOR).isEmpty();
    }

    @Test
    void scriptsThatReadTheClockBeforeWritingAskForEffectsReplication(RedisServer server)
            throws Exception {
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, String> script : scripts().entrySet()) {
            String text = script.getValue();
            int clock = -1;
            boolean writesAfter = false;
            Matcher call = CALL.matcher(text);
            while (call.find()) {
                Set<String> info = commandInfo(server, call.group(1));
                if (clock < 0 && info.contains("nondeterministic_output")) {
                    clock = call.start();
                } else if (clock >= 0 && info.contains("write")) {
                    writesAfter = true;
                }
            }
            if (clock >= 0 && writesAfter) {
                int replicate = text.indexOf("redis.replicate_commands()");
                if (replicate < 0 || replicate > clock) {
                    missing.add(script.getKey());
                }
            }
        }
        assertThat(missing)
                .as(
                        "scripts that read the clock and then write, without"
                                + " redis.replicate_commands() first (needed before Redis 5, and"
                                + " with lua-replicate-commands no)")
                .isEmpty();
    }

    /** Every script redlease sends, as sent: the composed ones of {@link Scripts}, and the rest. */
    private static Map<String, String> scripts() throws Exception {
        Map<String, String> scripts = new LinkedHashMap<>();
        for (Field field : Scripts.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers())
                    && RedisScript.class.isAssignableFrom(field.getType())) {
                field.setAccessible(true);
                scripts.put(
                        field.getName(), ((RedisScript<?>) field.get(null)).getScriptAsString());
            }
        }
        // A fenced eval wraps the caller's body in fence.lua.
        scripts.put("fenced(body)", Scripts.fenced("").getScriptAsString());
        for (String resource : OTHER_SCRIPTS) {
            try (InputStream in = Scripts.class.getResourceAsStream(resource)) {
                assertThat(in).as(resource).isNotNull();
                scripts.put(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException ex) {
                throw new IllegalStateException(resource, ex);
            }
        }
        assertThat(scripts).containsKeys("ACQUIRE_PREFERRING", "CANDIDATE_HEARTBEAT");
        return scripts;
    }

    /** Returns {@code COMMAND DOCS} of a command as a map. */
    private static Map<String, Object> docs(RedisServer server, String command) {
        Object reply = server.command("COMMAND", "DOCS", command);
        assertThat(reply).as("COMMAND DOCS " + command).isInstanceOf(List.class);
        List<?> pair = (List<?>) reply;
        assertThat(pair).as("COMMAND DOCS " + command + ": unknown command").hasSize(2);
        return map((List<?>) pair.get(1));
    }

    /** Returns the flags and tips of {@code COMMAND INFO}. */
    private static Set<String> commandInfo(RedisServer server, String command) {
        Object reply = server.command("COMMAND", "INFO", command);
        Set<String> words = new TreeSet<>();
        flatten(reply, words);
        return words;
    }

    private static void flatten(Object reply, Set<String> words) {
        if (reply instanceof List<?> list) {
            list.forEach(item -> flatten(item, words));
        } else if (reply != null) {
            words.add(reply.toString().toLowerCase(Locale.ROOT));
        }
    }

    private static Map<String, Object> map(List<?> fields) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            map.put(String.valueOf(fields.get(i)), fields.get(i + 1));
        }
        return map;
    }

    /** Collects every argument token (NX, PX, BYSCORE, ...) with its {@code since}, if any. */
    private static void collectTokens(Object arguments, Map<String, String> tokens) {
        if (!(arguments instanceof List<?> list)) {
            return;
        }
        for (Object argument : list) {
            if (argument instanceof List<?> fields) {
                Map<String, Object> doc = map(fields);
                Object token = doc.get("token");
                if (token != null) {
                    tokens.put(
                            token.toString().toUpperCase(Locale.ROOT),
                            doc.containsKey("since") ? String.valueOf(doc.get("since")) : "0");
                }
                collectTokens(doc.get("arguments"), tokens);
            }
        }
    }

    /** Describes the history entries newer than the floor (behaviour redlease must not rely on). */
    private static String historyAfterFloor(Map<String, Object> docs) {
        List<String> entries = new ArrayList<>();
        if (docs.get("history") instanceof List<?> history) {
            for (Object entry : history) {
                if (entry instanceof List<?> pair
                        && pair.size() == 2
                        && compare(String.valueOf(pair.get(0)), FLOOR) > 0) {
                    entries.add(pair.get(0) + ": " + pair.get(1));
                }
            }
        }
        return entries.isEmpty() ? "" : "; later: " + entries;
    }

    /** Compares dotted versions numerically. */
    static int compare(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int p = i < x.length ? Integer.parseInt(x[i]) : 0;
            int q = i < y.length ? Integer.parseInt(y[i]) : 0;
            if (p != q) {
                return Integer.compare(p, q);
            }
        }
        return 0;
    }
}
