package io.redlease.samples.demo;

import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Which instance holds each partition of a partitioned election, and its newest token, as Redis has
 * them: partition {@code i}'s lease {@code {<name>:p<i>}:leader} and counter {@code :fence}.
 */
record Assignment(int partitions, Map<Integer, Holder> holders) {

    /** A partition's holder and newest token. */
    record Holder(String node, long token) {}

    /** Reads the assignment; a free partition has no holder. */
    static Assignment read(Redis redis, String election, int partitions) throws IOException {
        Map<Integer, Holder> holders = new TreeMap<>();
        for (int p = 0; p < partitions; p++) {
            String node = redis.get(tag(election, p) + ":leader");
            String token = redis.get(tag(election, p) + ":fence");
            if (node != null && token != null) {
                holders.put(p, new Holder(node, Long.parseLong(token)));
            }
        }
        return new Assignment(partitions, holders);
    }

    /** Returns partition {@code p}'s hash tag, the prefix of its keys. */
    static String tag(String election, int p) {
        return "{" + election + ":p" + p + "}";
    }

    Holder holder(int partition) {
        return holders.get(partition);
    }

    /** Returns the partitions a node holds, with their tokens. */
    Map<Integer, Long> heldBy(String node) {
        return holders.entrySet().stream()
                .filter(e -> e.getValue().node().equals(node))
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().token()));
    }

    int count(String node) {
        return heldBy(node).size();
    }

    /**
     * Whether every partition is held by one of the live nodes, each holding its fair share or one
     * more.
     */
    boolean isBalancedOver(Set<String> live) {
        if (holders.size() != partitions
                || !holders.values().stream().allMatch(h -> live.contains(h.node()))) {
            return false;
        }
        int fair = partitions / live.size();
        int most = partitions % live.size() == 0 ? fair : fair + 1;
        return live.stream().mapToInt(this::count).allMatch(n -> n >= fair && n <= most);
    }

    /** Prints a line per live node with the partitions it holds, then the shares. */
    void print(Set<String> live) {
        for (String node : live) {
            String owned =
                    new TreeMap<>(heldBy(node))
                            .keySet().stream()
                                    .map(String::valueOf)
                                    .collect(Collectors.joining(" "));
            System.out.printf("      %-7s %2d  %s%n", node, count(node), owned);
        }
        System.out.printf(
                "      %d of %d partitions held by %d instances: %s (fair share %d)%n",
                holders.size(),
                partitions,
                live.size(),
                live.stream().map(n -> Integer.toString(count(n))).collect(Collectors.joining("/")),
                partitions / live.size());
    }
}
