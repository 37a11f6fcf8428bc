package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A Redis Cluster on loopback: three primaries and three replicas created with {@code redis-cli
 * --cluster create ... --cluster-replicas 1}, with a short {@code cluster-node-timeout} so a
 * replica takes over a killed primary in a second or two.
 *
 * <p>Every process is a {@link RedisNode}, ended by its pid in {@link #close()}.
 */
public final class RedisClusterSetup implements AutoCloseable {

    private static final Duration READY_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(30));

    /** What a replica logs when it abandons a manual failover (after 5 s in Redis 7). */
    private static final String MANUAL_FAILOVER_TIMED_OUT = "Manual failover timed out";

    /** Past Redis' 5 s manual-failover window: the attempt is over, whatever the log says. */
    private static final Duration MANUAL_FAILOVER_ATTEMPT = Duration.ofSeconds(6);

    private final List<RedisNode> nodes;

    private RedisClusterSetup(List<RedisNode> nodes) {
        this.nodes = nodes;
    }

    /**
     * Starts six cluster-enabled nodes, creates the cluster and waits until every node reports
     * {@code cluster_state:ok} and knows all six nodes.
     *
     * @param nodeTimeout the {@code cluster-node-timeout}, how long a primary may be unreachable
     *     before its replica takes over
     * @return the running cluster; close it when done
     */
    public static RedisClusterSetup start(Duration nodeTimeout) {
        List<RedisNode> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                nodes.add(
                        RedisNode.start(
                                "--cluster-enabled",
                                "yes",
                                "--cluster-config-file",
                                "nodes.conf",
                                "--cluster-node-timeout",
                                Long.toString(nodeTimeout.toMillis()),
                                "--cluster-replica-validity-factor",
                                "0"));
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (RedisNode node : nodes) {
                create.add(node.address());
            }
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            run(create);
            RedisClusterSetup cluster = new RedisClusterSetup(nodes);
            await("the cluster to become ok on every node", cluster::allOk);
            // A replica that never finished its first sync cannot take over its primary.
            await("every replica to be in sync", cluster::replicasInSync);
            // Each node learns a replica's role from the replica's own cluster-bus messages, which
            // can come after the replication link is up: until then its primary ignores the
            // replica's CLUSTER FAILOVER and the other primaries refuse it their votes.
            await("every node to know every replica's primary", cluster::replicasKnownEverywhere);
            return cluster;
        } catch (RuntimeException | Error ex) {
            for (RedisNode node : nodes) {
                node.close();
            }
            throw ex;
        }
    }

    private boolean allOk() {
        for (RedisNode node : nodes) {
            if (node.isAlive() && !nodeOk(node)) {
                return false;
            }
        }
        return true;
    }

    private static boolean nodeOk(RedisNode node) {
        try {
            String info = String.valueOf(node.command("CLUSTER", "INFO"));
            return "ok".equals(RedisServer.infoField(info, "cluster_state"))
                    && "6".equals(RedisServer.infoField(info, "cluster_known_nodes"))
                    && "16384".equals(RedisServer.infoField(info, "cluster_slots_ok"));
        } catch (RuntimeException ex) {
            return false;
        }
    }

    private boolean replicasInSync() {
        int inSync = 0;
        for (RedisNode node : nodes) {
            try {
                if ("slave".equals(node.info("replication", "role"))
                        && "up".equals(node.info("replication", "master_link_status"))) {
                    inSync++;
                }
            } catch (RuntimeException ex) {
                return false;
            }
        }
        return inSync == 3;
    }

    private boolean replicasKnownEverywhere() {
        int known = 0;
        for (RedisNode node : nodes) {
            try {
                if (node.isAlive() && "slave".equals(node.info("replication", "role"))) {
                    RedisNode primary =
                            byPort(Integer.parseInt(node.info("replication", "master_port")));
                    if (primary == null || !knownEverywhereAsReplicaOf(node, primary)) {
                        return false;
                    }
                    known++;
                }
            } catch (RuntimeException ex) {
                return false;
            }
        }
        return known == 3;
    }

    /**
     * Whether every live node's {@code CLUSTER NODES} shows {@code replica} as a healthy replica of
     * the healthy primary {@code primary}, and the two have their cluster-bus links up to each
     * other.
     */
    private boolean knownEverywhereAsReplicaOf(RedisNode replica, RedisNode primary) {
        for (RedisNode asked : nodes) {
            if (!asked.isAlive()) {
                continue;
            }
            try {
                List<Peer> view = Peer.parse(String.valueOf(asked.command("CLUSTER", "NODES")));
                Peer r = Peer.byPort(view, replica.port());
                Peer p = Peer.byPort(view, primary.port());
                if (r == null
                        || p == null
                        || !r.healthy()
                        || !p.healthy()
                        || !r.flags().contains("slave")
                        || !r.masterId().equals(p.id())
                        || !p.flags().contains("master")) {
                    return false;
                }
                if ((asked == replica && !p.connected()) || (asked == primary && !r.connected())) {
                    return false;
                }
            } catch (RuntimeException ex) {
                return false;
            }
        }
        return true;
    }

    /** One line of {@code CLUSTER NODES}. */
    private record Peer(
            String id, int port, List<String> flags, String masterId, boolean connected) {

        static List<Peer> parse(String clusterNodes) {
            List<Peer> peers = new ArrayList<>();
            for (String line : clusterNodes.split("\n")) {
                String[] f = line.trim().split(" ");
                if (f.length < 8) {
                    continue;
                }
                String address = f[1].split("[@,]")[0];
                int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
                List<String> flags = List.of(f[2].split(","));
                peers.add(
                        new Peer(
                                f[0],
                                port,
                                flags,
                                f[3],
                                flags.contains("myself") || "connected".equals(f[7])));
            }
            return peers;
        }

        static @Nullable Peer byPort(List<Peer> peers, int port) {
            for (Peer peer : peers) {
                if (peer.port() == port) {
                    return peer;
                }
            }
            return null;
        }

        boolean healthy() {
            return !flags.contains("fail")
                    && !flags.contains("fail?")
                    && !flags.contains("handshake")
                    && !flags.contains("noaddr");
        }
    }

    /** Returns the six nodes in start order. */
    public List<RedisNode> nodes() {
        return List.copyOf(nodes);
    }

    /**
     * Returns the hash slot of a key, as {@code CLUSTER KEYSLOT} on the first live node computes
     * it.
     *
     * @param key the key
     * @return the slot
     */
    public int slot(String key) {
        RuntimeException last = null;
        for (RedisNode node : nodes) {
            if (!node.isAlive()) {
                continue;
            }
            try {
                return ((Long) node.command("CLUSTER", "KEYSLOT", key)).intValue();
            } catch (RuntimeException ex) {
                last = ex;
            }
        }
        throw new IllegalStateException("No live node answers CLUSTER KEYSLOT", last);
    }

    /**
     * Returns the live node that is primary for the slot of {@code key}, as a live node reports it.
     *
     * @param key the key whose slot to look up
     * @return the primary serving the slot
     */
    public RedisNode primaryFor(String key) {
        int slot = slot(key);
        for (RedisNode asked : nodes) {
            if (!asked.isAlive()) {
                continue;
            }
            try {
                Object slots = asked.command("CLUSTER", "SLOTS");
                for (Object range : (List<?>) slots) {
                    List<?> fields = (List<?>) range;
                    long from = (Long) fields.get(0);
                    long to = (Long) fields.get(1);
                    if (slot >= from && slot <= to) {
                        long port = (Long) ((List<?>) fields.get(2)).get(1);
                        RedisNode node = byPort((int) port);
                        if (node != null) {
                            return node;
                        }
                    }
                }
            } catch (RuntimeException ex) {
                // ask the next node
            }
        }
        throw new IllegalStateException("No node reports a primary for slot " + slot);
    }

    private @Nullable RedisNode byPort(int port) {
        for (RedisNode node : nodes) {
            if (node.port() == port) {
                return node;
            }
        }
        return null;
    }

    /**
     * Kills the primary serving the slot of {@code key} with {@code SIGKILL} and waits until a
     * replica has taken the slot over and every live node reports {@code cluster_state:ok}.
     *
     * @param key the key whose primary to kill
     * @param timeout how long to wait for the failover
     * @return the new primary of the slot
     */
    public RedisNode killPrimaryAndAwaitFailover(String key, Duration timeout) {
        RedisNode old = primaryFor(key);
        old.kill();
        return awaitNewPrimary(key, old, timeout);
    }

    /**
     * Returns the live replica of {@code primary}, as the replicas report their primary.
     *
     * @param primary a primary node
     * @return its replica
     * @throws IllegalStateException if no live node replicates it
     */
    public RedisNode replicaOf(RedisNode primary) {
        for (RedisNode node : nodes) {
            try {
                if (node != primary
                        && node.isAlive()
                        && "slave".equals(node.info("replication", "role"))
                        && Integer.toString(primary.port())
                                .equals(node.info("replication", "master_port"))) {
                    return node;
                }
            } catch (RuntimeException ex) {
                // ask the next node
            }
        }
        throw new IllegalStateException("No live replica of " + primary);
    }

    /**
     * Makes the replica of the primary serving the slot of {@code key} take over with a manual,
     * coordinated {@code CLUSTER FAILOVER} (the primary is alive and hands over once the replica
     * has caught up), and waits until the replica serves the slot, every live node reports {@code
     * cluster_state:ok} and every live node knows the old primary as the new one's replica.
     *
     * <p>{@code CLUSTER FAILOVER} only asks. A primary ignores the request from a node it does not
     * yet know as its replica (a role travels by cluster-bus gossip: just after the cluster was
     * created, and after a failover until the demoted primary's new role reaches the promoted one),
     * and other primaries refuse such a node their votes; the replica then abandons the hand-over
     * after Redis' 5 s and logs "Manual failover timed out.". And a replica asked within twice the
     * vote timeout ({@code 2 * max(2 * cluster-node-timeout, 2 s)}, 4 s in these tests) of an
     * election it won still counts that election's votes: it "wins" at once without asking, is
     * overruled by the newer configuration, and drops the hand-over without logging a time-out. So
     * this first waits until every node agrees on the roles, and asks again, still coordinated
     * (never {@code FORCE}, which would skip the catch-up), when the replica logs that it gave up
     * or 6 s after asking, until {@code timeout}.
     *
     * @param key the key whose primary to replace
     * @param timeout how long to wait for the hand-over, all attempts included
     * @return the new primary of the slot; the old one is now its replica
     */
    public RedisNode manualFailover(String key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RedisNode old = primaryFor(key);
        RedisNode replica = replicaOf(old);
        Path log = replica.dir().resolve("redis.log");
        for (int attempt = 1; ; attempt++) {
            await(
                    "every node to know " + replica + " as the replica of " + old,
                    () -> knownEverywhereAsReplicaOf(replica, old),
                    deadline,
                    timeout);
            long gaveUp = count(log, MANUAL_FAILOVER_TIMED_OUT);
            long askedAt = System.nanoTime();
            replica.command("CLUSTER", "FAILOVER");
            while (true) {
                RedisNode now = promoted(key, old);
                if (now != null) {
                    await(
                            "every node to know " + old + " as the replica of " + now,
                            () -> knownEverywhereAsReplicaOf(old, now),
                            deadline,
                            timeout);
                    return now;
                }
                if (count(log, MANUAL_FAILOVER_TIMED_OUT) > gaveUp
                        || System.nanoTime() - askedAt > MANUAL_FAILOVER_ATTEMPT.toNanos()) {
                    System.err.println(
                            "[redlease-test-support] manual failover attempt "
                                    + attempt
                                    + " of "
                                    + replica
                                    + " did not complete; asking again");
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(
                            "No failover of "
                                    + old
                                    + " within "
                                    + timeout
                                    + " ("
                                    + attempt
                                    + " CLUSTER FAILOVER attempts); "
                                    + describe());
                }
                Processes.pause(Duration.ofMillis(20));
            }
        }
    }

    private static long count(Path log, String text) {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                    .filter(line -> line.contains(text))
                    .count();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private @Nullable RedisNode promoted(String key, RedisNode old) {
        try {
            RedisNode now = primaryFor(key);
            if (now != old && "master".equals(now.info("replication", "role")) && liveOk()) {
                return now;
            }
        } catch (RuntimeException ex) {
            // not yet
        }
        return null;
    }

    private RedisNode awaitNewPrimary(String key, RedisNode old, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            RedisNode now = promoted(key, old);
            if (now != null) {
                return now;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "No failover of " + old + " within " + timeout + "; " + describe());
            }
            Processes.pause(Duration.ofMillis(20));
        }
    }

    /** Each live node's view: state, role and its CLUSTER NODES, and the tail of its log. */
    private String describe() {
        StringBuilder text = new StringBuilder();
        for (RedisNode node : nodes) {
            text.append("\n").append(node).append(node.isAlive() ? "" : " (not running)");
            if (!node.isAlive()) {
                continue;
            }
            try {
                String info = String.valueOf(node.command("CLUSTER", "INFO"));
                text.append(" cluster_state=")
                        .append(RedisServer.infoField(info, "cluster_state"))
                        .append(" role=")
                        .append(node.info("replication", "role"))
                        .append("\n")
                        .append(node.command("CLUSTER", "NODES"));
            } catch (RuntimeException ex) {
                text.append(" (no answer: ").append(ex.getMessage()).append(")");
            }
            text.append(Processes.tail(node.dir().resolve("redis.log"), 8));
        }
        return text.toString();
    }

    private boolean liveOk() {
        for (RedisNode node : nodes) {
            if (!node.isAlive()) {
                continue;
            }
            try {
                String info = String.valueOf(node.command("CLUSTER", "INFO"));
                if (!"ok".equals(RedisServer.infoField(info, "cluster_state"))) {
                    return false;
                }
            } catch (RuntimeException ex) {
                return false;
            }
        }
        return true;
    }

    /** Ends every node by its pid. */
    @Override
    public void close() {
        for (RedisNode node : nodes) {
            node.close();
        }
    }

    private static void run(List<String> command) {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        try {
            Process process = builder.start();
            process.getOutputStream().close();
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command)
                                + " failed: "
                                + new String(output, StandardCharsets.UTF_8));
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not run " + command.get(0), ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while creating the cluster", ex);
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Timed out waiting for " + what);
            }
            Processes.pause(Duration.ofMillis(20));
        }
    }

    private void await(String what, BooleanSupplier condition, long deadline, Duration timeout) {
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "Timed out waiting " + timeout + " for " + what + "; " + describe());
            }
            Processes.pause(Duration.ofMillis(20));
        }
    }
}
