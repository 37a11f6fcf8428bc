package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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
     * has caught up), and waits until the replica serves the slot and every live node reports
     * {@code cluster_state:ok}.
     *
     * @param key the key whose primary to replace
     * @param timeout how long to wait for the hand-over
     * @return the new primary of the slot; the old one is now its replica
     */
    public RedisNode manualFailover(String key, Duration timeout) {
        RedisNode old = primaryFor(key);
        RedisNode replica = replicaOf(old);
        replica.command("CLUSTER", "FAILOVER");
        return awaitNewPrimary(key, old, timeout);
    }

    private RedisNode awaitNewPrimary(String key, RedisNode old, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                RedisNode now = primaryFor(key);
                if (now != old && "master".equals(now.info("replication", "role")) && liveOk()) {
                    return now;
                }
            } catch (RuntimeException ex) {
                // not yet
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
}
