package io.redlease.reliability;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The least-privilege ACL rules of each redlease feature, for an election (or partitioned election)
 * named {@code <name>}: what {@code SecurityTests} documents and checks. A user of a feature needs
 * the election's rules plus the feature's own (a partitioned election's rules stand alone: its keys
 * and channels are the partitions'). The commands are those the feature's scripts and Java calls
 * send (the scripts under {@code redlease-core/src/main/resources}, read by {@code
 * SupportedServerTests}); {@code SecurityTests} checks that a run of the feature sends nothing else
 * ({@code INFO commandstats}) and that each rule is needed.
 */
enum FeatureAcl {

    /** Acquire, renew, release, the holder read and the release notifications. */
    ELECTION("election") {
        @Override
        List<String> own(String name) {
            List<String> rules = new ArrayList<>(ELECTION_COMMANDS);
            rules.add("~" + name + ":*");
            rules.add("&" + name + ":released");
            return rules;
        }
    },

    /**
     * {@code Fencer.set} (covered by {@code +set}), {@code Fencer.hset}, and a fenced eval whose
     * body pushes to a list; an application adds what its own bodies call, and key patterns for
     * fenced keys outside {@code <name>:*}.
     */
    FENCED_WRITES("fenced writes") {
        @Override
        List<String> own(String name) {
            return List.of("+hset", "+rpush");
        }
    },

    /** The ledger of once-per-slot runs, {@code <name>:slots:<job>}. */
    ONCE_PER_SLOT("once-per-slot") {
        @Override
        List<String> own(String name) {
            return List.of("+hget", "+hgetall", "+hset", "+hsetnx", "+hexists");
        }
    },

    /** Leader discovery: {@code advertise} and {@code leaderInfo}, {@code <name>:leader:info}. */
    DISCOVERY("leader discovery") {
        @Override
        List<String> own(String name) {
            return List.of("+hset", "+hget", "+hmget", "+hgetall");
        }
    },

    /** Preferred leaders: the candidates' heartbeats in {@code <name>:candidates}. */
    PREFERENCE("preferred leaders") {
        @Override
        List<String> own(String name) {
            return List.of("+hset", "+hdel", "+hgetall", "+time");
        }
    },

    /**
     * A partitioned election: each partition is an election named {@code {<name>:p<i>}}, and the
     * member set is {@code {<name>}:members}.
     */
    PARTITIONS("partitions") {
        @Override
        List<String> own(String name) {
            return List.of(
                    "+mget",
                    "+zadd",
                    "+zrem",
                    "+zremrangebyscore",
                    "+zrange",
                    "+time",
                    "~{" + name + ":p*}:*",
                    "~{" + name + "}:members",
                    "&{" + name + ":p*}:released");
        }

        @Override
        List<String> rules(String name) {
            List<String> rules = new ArrayList<>(ELECTION_COMMANDS);
            rules.addAll(own(name));
            return rules;
        }
    };

    /** The commands of every election, with or without partitions. */
    static final List<String> ELECTION_COMMANDS =
            List.of(
                    "+evalsha",
                    "+eval",
                    "+get",
                    "+set",
                    "+incr",
                    "+pexpire",
                    "+pttl",
                    "+del",
                    "+publish",
                    "+subscribe",
                    "+unsubscribe",
                    "+ping");

    private final String title;

    FeatureAcl(String title) {
        this.title = title;
    }

    String title() {
        return title;
    }

    /** The rules this feature adds to the election's (for the election: its own). */
    abstract List<String> own(String name);

    /** Every rule a user of this feature needs. */
    List<String> rules(String name) {
        Set<String> rules = new LinkedHashSet<>(ELECTION.own(name));
        rules.addAll(own(name));
        return new ArrayList<>(rules);
    }

    /** The commands among {@link #rules}, in lower case without the {@code +}. */
    Set<String> commands(String name) {
        Set<String> commands = new LinkedHashSet<>();
        for (String rule : rules(name)) {
            if (rule.startsWith("+")) {
                commands.add(rule.substring(1));
            }
        }
        return commands;
    }

    /** The commands among {@link #own}, in lower case without the {@code +}. */
    Set<String> ownCommands(String name) {
        Set<String> commands = new LinkedHashSet<>();
        for (String rule : own(name)) {
            if (rule.startsWith("+")) {
                commands.add(rule.substring(1));
            }
        }
        return commands;
    }

    /**
     * Renders the copy-pasteable {@code ACL SETUSER} line of this feature for user {@code
     * redlease}: the whole set for the election and partitions, the additions for the others
     * (applied to a user that has the election's rules; {@code ACL SETUSER} adds to a user).
     */
    String setUser(String name) {
        List<String> parts = new ArrayList<>(List.of("ACL", "SETUSER", "redlease"));
        if (this == ELECTION || this == PARTITIONS) {
            parts.addAll(List.of("on", ">PASSWORD", "resetkeys", "resetchannels"));
            parts.addAll(rules(name));
        } else {
            parts.addAll(own(name));
        }
        return String.join(" ", parts);
    }
}
