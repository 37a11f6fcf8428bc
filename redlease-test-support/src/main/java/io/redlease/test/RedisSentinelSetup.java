package io.redlease.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A Redis Sentinel deployment on loopback: one primary, one replica (replicating through a {@link
 * TcpProxy}, so tests can hold its replication stream) and three Sentinels watching them under the
 * master name {@value #MASTER_NAME}, tuned to fail over in about a second.
 *
 * <p>Every process is a {@link RedisNode}, ended by its pid in {@link #close()}. The data nodes are
 * kept by their role at start: {@link #initialPrimary()} and {@link #initialReplica()}; {@link
 * #currentPrimaryPort()} asks the Sentinels who is primary now.
 */
public final class RedisSentinelSetup implements AutoCloseable {

    /** The master name the Sentinels monitor. */
    public static final String MASTER_NAME = "redlease-master";

    private static final Duration READY_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(20));

    private final RedisNode primary;
    private final RedisNode replica;
    private final List<RedisNode> sentinels;
    private final TcpProxy replicationLink;

    private RedisSentinelSetup(
            RedisNode primary, RedisNode replica, List<RedisNode> sentinels, TcpProxy link) {
        this.primary = primary;
        this.replica = replica;
        this.sentinels = sentinels;
        this.replicationLink = link;
    }

    /**
     * Returns the proxy the replica replicates through, to hold or drop the replication stream (for
     * example {@link TcpProxy#blackhole()} to make the replica miss the latest writes).
     */
    public TcpProxy replicationLink() {
        return replicationLink;
    }

    /**
     * Starts the primary, the replica (waiting until it is in sync) and three Sentinels with quorum
     * 2, {@code down-after-milliseconds} {@code downAfter} and {@code failover-timeout} 3 s;
     * returns once every Sentinel knows the replica and the other two Sentinels.
     *
     * @param downAfter how long the primary must be unreachable before it is considered down
     * @return the running deployment; close it when done
     */
    public static RedisSentinelSetup start(Duration downAfter) {
        List<RedisNode> started = new ArrayList<>();
        TcpProxy link = null;
        try {
            RedisNode primary = RedisNode.start();
            started.add(primary);
            link = TcpProxy.start(primary.host(), primary.port());
            RedisNode replica =
                    RedisNode.start(
                            "--replicaof",
                            link.host(),
                            Integer.toString(link.port()),
                            "--repl-ping-replica-period",
                            "1");
            started.add(replica);
            await(
                    "the replica to sync",
                    () -> "up".equals(replica.info("replication", "master_link_status")));
            List<RedisNode> sentinels = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RedisNode sentinel =
                        RedisNode.startSentinel(
                                List.of(
                                        "sentinel monitor "
                                                + MASTER_NAME
                                                + " "
                                                + primary.host()
                                                + " "
                                                + primary.port()
                                                + " 2",
                                        "sentinel down-after-milliseconds "
                                                + MASTER_NAME
                                                + " "
                                                + downAfter.toMillis(),
                                        "sentinel failover-timeout " + MASTER_NAME + " 3000",
                                        "sentinel parallel-syncs " + MASTER_NAME + " 1"));
                started.add(sentinel);
                sentinels.add(sentinel);
            }
            RedisSentinelSetup setup = new RedisSentinelSetup(primary, replica, sentinels, link);
            await("the Sentinels to discover each other and the replica", setup::discovered);
            return setup;
        } catch (RuntimeException | Error ex) {
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).close();
            }
            if (link != null) {
                link.close();
            }
            throw ex;
        }
    }

    private boolean discovered() {
        for (RedisNode sentinel : sentinels) {
            try {
                Object replicas = sentinel.command("SENTINEL", "REPLICAS", MASTER_NAME);
                Object others = sentinel.command("SENTINEL", "SENTINELS", MASTER_NAME);
                if (!(replicas instanceof List<?> r) || r.isEmpty()) {
                    return false;
                }
                if (!(others instanceof List<?> o) || o.size() < sentinels.size() - 1) {
                    return false;
                }
            } catch (RuntimeException ex) {
                return false;
            }
        }
        return true;
    }

    /** Returns the node that was primary at start. */
    public RedisNode initialPrimary() {
        return primary;
    }

    /** Returns the node that was the replica at start. */
    public RedisNode initialReplica() {
        return replica;
    }

    /** Returns the data node listening on the port, or null. */
    public @Nullable RedisNode node(int port) {
        return primary.port() == port ? primary : replica.port() == port ? replica : null;
    }

    /** Returns the three Sentinels. */
    public List<RedisNode> sentinels() {
        return List.copyOf(sentinels);
    }

    /**
     * Returns the primary's port as the first Sentinel that answers reports it.
     *
     * @return the port of the current primary
     */
    public int currentPrimaryPort() {
        RuntimeException last = null;
        for (RedisNode sentinel : sentinels) {
            try {
                Object reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                if (reply instanceof List<?> address && address.size() == 2) {
                    return Integer.parseInt(String.valueOf(address.get(1)));
                }
            } catch (RuntimeException ex) {
                last = ex;
            }
        }
        throw new IllegalStateException("No Sentinel reported the primary", last);
    }

    /** Returns the data node that the Sentinels report as primary now. */
    public RedisNode currentPrimary() {
        RedisNode node = node(currentPrimaryPort());
        if (node == null) {
            throw new IllegalStateException("The Sentinels report an unknown primary");
        }
        return node;
    }

    /** Asks a Sentinel for a manual failover ({@code SENTINEL FAILOVER}). */
    public void failover() {
        sentinels.get(0).command("SENTINEL", "FAILOVER", MASTER_NAME);
    }

    /**
     * Waits until every Sentinel reports a primary other than {@code oldPrimaryPort} and that node
     * answers as a primary.
     *
     * @param oldPrimaryPort the port of the primary before the failover
     * @param timeout how long to wait
     * @return the new primary
     */
    public RedisNode awaitNewPrimary(int oldPrimaryPort, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            RedisNode promoted = promotedOrNull(oldPrimaryPort);
            if (promoted != null) {
                return promoted;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "No failover away from port " + oldPrimaryPort + " within " + timeout);
            }
            Processes.pause(Duration.ofMillis(20));
        }
    }

    private @Nullable RedisNode promotedOrNull(int oldPrimaryPort) {
        int agreed = -1;
        for (RedisNode sentinel : sentinels) {
            try {
                Object reply = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                if (!(reply instanceof List<?> address) || address.size() != 2) {
                    return null;
                }
                int port = Integer.parseInt(String.valueOf(address.get(1)));
                if (port == oldPrimaryPort || (agreed != -1 && agreed != port)) {
                    return null;
                }
                agreed = port;
            } catch (RuntimeException ex) {
                return null;
            }
        }
        RedisNode node = node(agreed);
        try {
            if (node != null && "master".equals(node.info("replication", "role"))) {
                return node;
            }
        } catch (RuntimeException ex) {
            return null;
        }
        return null;
    }

    /** Ends every process by its pid, Sentinels first. */
    @Override
    public void close() {
        for (RedisNode sentinel : sentinels) {
            sentinel.close();
        }
        replica.close();
        replicationLink.close();
        primary.close();
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
