package io.redlease.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The keys an election's fenced writes may name, checked before any Redis call: a fence guards its
 * own election's keys only.
 *
 * <p>A key is the election's when it carries the name's hash tag (Redis's rule: the text between
 * the first {@code '{'} and the first {@code '}'} after it, if not empty), or, for a name without
 * one, when it starts with {@code <name>:}; or when it starts with one of the election's declared
 * {@link ElectorConfig#fencedKeyPrefixes() prefixes}. The election's own keys (lease, token
 * counter, fence mark, leader info, candidates, slot ledgers) are never writable through it.
 */
final class FencedKeys {

    private final String name;

    private final @Nullable String tag;

    private final List<String> prefixes;

    private final String markKey;

    private final Set<String> reserved;

    private final String ledgers;

    FencedKeys(ElectorConfig config) {
        this.name = config.name();
        this.tag = hashTag(name);
        this.prefixes = config.fencedKeyPrefixes();
        this.markKey = name + ":fence:applied";
        this.reserved =
                Set.of(
                        name + ":leader",
                        name + ":fence",
                        markKey,
                        LeaderInfoStore.infoKey(name),
                        Preference.candidatesKey(name));
        this.ledgers = SlotLedger.keyPrefix(name);
    }

    /**
     * Returns the hash tag of a key or name by Redis Cluster's rule, or null when it has none: the
     * text between the first {@code '{'} and the first {@code '}'} after it, if not empty.
     */
    static @Nullable String hashTag(String key) {
        int open = key.indexOf('{');
        if (open < 0) {
            return null;
        }
        int close = key.indexOf('}', open + 1);
        return close > open + 1 ? key.substring(open + 1, close) : null;
    }

    /** Returns the keys of a fenced write of a single command: the mark, then the key. */
    List<String> single(@Nullable String key) {
        return List.of(markKey, check(LeaseProtocol.required(key, "key")));
    }

    /** Returns the keys of a fenced eval, the mark first, once its arguments are checked. */
    List<String> eval(@Nullable List<String> keys, String @Nullable ... args) {
        List<String> allKeys = new ArrayList<>((keys == null ? 0 : keys.size()) + 1);
        allKeys.add(markKey);
        if (keys != null) {
            for (String key : keys) {
                allKeys.add(LeaseProtocol.required(key, "keys element"));
            }
        }
        if (args == null) {
            throw new IllegalArgumentException("redlease: args must not be null");
        }
        for (String arg : args) {
            LeaseProtocol.required(arg, "args element");
        }
        for (int i = 1; i < allKeys.size(); i++) {
            check(allKeys.get(i));
        }
        return allKeys;
    }

    private String check(String key) {
        if (reserved.contains(key) || key.startsWith(ledgers)) {
            throw new IllegalArgumentException(
                    "redlease: key '"
                            + key
                            + "' is reserved by election '"
                            + name
                            + "' (its lease, token counter, fence mark, leader info, candidates"
                            + " and slot ledgers): a fenced write must not name it");
        }
        if (owned(key)) {
            return key;
        }
        for (String prefix : prefixes) {
            if (key.startsWith(prefix)) {
                return key;
            }
        }
        throw new IllegalArgumentException(
                "redlease: key '"
                        + key
                        + "' is not a key of election '"
                        + name
                        + "': a fence guards its own election's keys only, those "
                        + (tag != null
                                ? "with the hash tag {" + tag + "}"
                                : "starting with '" + name + ":'")
                        + (prefixes.isEmpty() ? "" : " or starting with one of " + prefixes)
                        + "; name the key so, or declare its prefix in the election's"
                        + " fencedKeyPrefixes (redlease.fenced-key-prefixes)");
    }

    private boolean owned(String key) {
        return tag != null ? tag.equals(hashTag(key)) : key.startsWith(name + ":");
    }
}
