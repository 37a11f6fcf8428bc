package io.redlease.core.partition;

import io.redlease.core.Elector;
import io.redlease.core.Fencer;
import io.redlease.core.ReleaseWatch;
import io.redlease.core.Term;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import java.util.zip.CRC32;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Partitioned leadership: a role's work split into a fixed number of partitions, each an ordinary
 * election with its own lease and strictly increasing fencing token, spread evenly over the live
 * instances with no coordinator.
 *
 * <p>Every instance keeps an entry in the member set {@code {<name>}:members}, refreshed every
 * {@linkplain PartitionedElectionConfig#balanceInterval() balance interval} and expiring one time
 * to live after the last refresh. From the sorted list of members it counts, each instance works
 * out its fair share ({@code ⌊n / m⌋}, or one more for the first {@code n mod m} members in id
 * order), hands over partitions beyond its share gracefully (the lease is released at once, so a
 * successor can win it within milliseconds), and campaigns for free partitions while below it,
 * looking five times per balance interval for a short while when it finds too few free. It also
 * hears the other instances' releases of its partitions (on the connection factory's release
 * subscription, where release notifications work: not on Redis Cluster) and balances at once on
 * each: a leaver removes its entry before it releases anything, so its first release tells the
 * others it left. The instances below their share deal the orphaned partitions (free, or held by an
 * instance no longer a member) between them in runs by id, so each campaigns for different ones,
 * and for each of its ones still held as soon as it hears that partition's release. It never takes
 * a partition another instance holds: partitions move only when their holder lets go or dies. A
 * newly seen member counts only after the {@linkplain PartitionedElectionConfig#settle() settle
 * period}, and one that drops out and comes back only after a time to live, so a flapping member
 * causes no churn; a starting instance campaigns only after one balance interval, counting at once
 * every member it saw meanwhile, so instances that start together split the partitions without
 * moving them. With agreeing views a join moves about {@code n / m} partitions and a leave moves
 * only the leaver's.
 *
 * <p>What is guaranteed, per partition, is what an {@link Elector} guarantees: at most one valid
 * lease at a time, tokens that strictly increase with every term, and fenced writes through the
 * partition's {@link Fencer} that a stale holder cannot make. The balance itself is best-effort:
 * while instances disagree about the members (during a settle period, a Redis outage) a partition
 * may stay free for a round or two, or an instance may hold one partition more than its share.
 *
 * <p>Routing: {@link #partitionOf(String)} maps a key to its partition with a documented hash that
 * other languages can compute: the CRC-32 (IEEE 802.3, the checksum of zlib, gzip and {@code
 * java.util.zip.CRC32}) of the key's UTF-8 bytes, as an unsigned 32-bit number, modulo the
 * partition count. For example {@code "123456789"} has CRC-32 {@code 0xCBF43926} and falls in
 * partition 38 of 256.
 *
 * <p>Threads: the partitions' electors run on the engine's shared threads, like any elector; each
 * partitioned election adds one thread of its own while started, for its membership refreshes and
 * balancing rounds (which make blocking round trips to Redis), and subscribes to its partitions'
 * release channels on the release subscription its connection factory's electors share. Listener
 * callbacks run on each partition's lane; see {@link PartitionListener}.
 */
public final class PartitionedElection implements AutoCloseable {

    private final PartitionedElectionConfig config;

    private final Elector[] electors;

    private final Map<Elector, Integer> partitions = new IdentityHashMap<>();

    private final Membership membership;

    private final RedisOperations<String, String> redis;

    private final Balancer balancer;

    private final BalancingThread running;

    /**
     * Creates a partitioned election over the given Redis operations; nothing runs until {@link
     * #start()}.
     *
     * @param redis the Redis operations; keys and values must serialize as plain UTF-8 strings, as
     *     with a {@link StringRedisTemplate}
     * @param config the validated configuration
     * @throws IllegalArgumentException if an argument is null or the operations do not write plain
     *     string keys
     */
    public PartitionedElection(
            @Nullable RedisOperations<String, String> redis,
            @Nullable PartitionedElectionConfig config) {
        this(redis, config, System::nanoTime);
    }

    /** With the clock its membership and balancing rounds read, for tests. */
    PartitionedElection(
            @Nullable RedisOperations<String, String> redis,
            @Nullable PartitionedElectionConfig config,
            LongSupplier clock) {
        if (redis == null) {
            throw new IllegalArgumentException("redlease: redis must not be null");
        }
        if (config == null) {
            throw new IllegalArgumentException("redlease: config must not be null");
        }
        this.config = config;
        this.redis = redis;
        this.electors = new Elector[config.partitions()];
        for (int partition = 0; partition < electors.length; partition++) {
            PartitionObserver observer = new PartitionObserver(partition, config.listeners());
            electors[partition] = new Elector(redis, config.partition(partition, observer));
            partitions.put(electors[partition], partition);
        }
        this.membership =
                new Membership(
                        redis,
                        config.name(),
                        config.instanceId(),
                        config.ttl(),
                        config.settle(),
                        config.balanceInterval(),
                        clock);
        this.balancer =
                new Balancer(
                        electors,
                        redis,
                        membership,
                        config.instanceId(),
                        config.balanceInterval(),
                        config.settle(),
                        clock);
        List<String> names = new ArrayList<>(electors.length);
        for (Elector elector : electors) {
            names.add(elector.name());
        }
        // The last index: joins and leaves of members (see Membership).
        names.add(Membership.announcer(config.name()));
        this.running =
                new BalancingThread(
                        config,
                        balancer,
                        membership,
                        heard ->
                                ReleaseWatch.open(redis, names, config.instanceId(), heard)
                                        .orElse(null));
    }

    /**
     * Creates a partitioned election over a new {@link StringRedisTemplate} on the given connection
     * factory.
     *
     * @param connectionFactory the Redis connection factory
     * @param config the validated configuration
     */
    public PartitionedElection(
            RedisConnectionFactory connectionFactory, PartitionedElectionConfig config) {
        this(stringTemplate(connectionFactory), config);
    }

    /**
     * Returns the partition of a key: the CRC-32 (IEEE) of its UTF-8 bytes, unsigned, modulo the
     * partition count. Stable across versions, instances and languages.
     *
     * @param key the key; not null
     * @param partitions the partition count, at least 1
     * @return the partition, from 0 to {@code partitions - 1}
     */
    public static int partitionOf(String key, int partitions) {
        if (key == null) {
            throw new IllegalArgumentException("redlease: key must not be null");
        }
        if (partitions < 1) {
            throw new IllegalArgumentException(
                    "redlease: partitions must be at least 1; got " + partitions);
        }
        CRC32 crc = new CRC32();
        crc.update(key.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % partitions);
    }

    /**
     * Returns the election name of a partition, {@code {<name>:p<partition>}}: its Redis keys are
     * this name followed by {@code :leader}, {@code :fence} and {@code :fence:applied}. Under Redis
     * Cluster, keys written through the partition's fencer must carry the same hash tag, e.g.
     * {@code {orders:p7}:state}.
     */
    public static String electionName(String name, int partition) {
        return "{" + name + ":p" + partition + "}";
    }

    /** Returns the partition of a key in this election; see {@link #partitionOf(String, int)}. */
    public int partitionOf(String key) {
        return partitionOf(key, electors.length);
    }

    /** Returns the election name of one of this election's partitions. */
    public String electionName(int partition) {
        return electionName(config.name(), checked(partition));
    }

    /** Returns the name all instances share. */
    public String name() {
        return config.name();
    }

    /** Returns this instance's id. */
    public String instanceId() {
        return config.instanceId();
    }

    /** Returns the partition count. */
    public int partitionCount() {
        return electors.length;
    }

    /** Returns the configuration. */
    public PartitionedElectionConfig config() {
        return config;
    }

    /**
     * Returns whether this instance holds a partition's lease now. Advisory, like {@link
     * Elector#isLeader()}: the term can end the moment after; write through {@link #fencer(int)}.
     *
     * @throws IllegalArgumentException if the partition is out of range
     */
    public boolean owns(int partition) {
        return electors[checked(partition)].isLeader();
    }

    /** Returns whether this instance holds the lease of the key's partition now; advisory. */
    public boolean ownsKey(String key) {
        return owns(partitionOf(key));
    }

    /** Returns the partitions this instance holds now, in ascending order; a snapshot. */
    public SortedSet<Integer> owned() {
        SortedSet<Integer> owned = new TreeSet<>();
        for (int partition = 0; partition < electors.length; partition++) {
            if (electors[partition].isLeader()) {
                owned.add(partition);
            }
        }
        return Collections.unmodifiableSortedSet(owned);
    }

    /** Returns the token of this instance's current term of a partition, or empty. */
    public OptionalLong token(int partition) {
        return electors[checked(partition)].token();
    }

    /**
     * Returns this instance's current term of a partition, or empty when it does not hold the
     * partition: run work inside it with {@link Term#execute}, which binds the term to the thread
     * (so that {@code LeadershipContext} answers for it) and interrupts the work when it ends.
     */
    public Optional<Term> term(int partition) {
        return electors[checked(partition)].term();
    }

    /**
     * Returns the term of one of this election's partitions that the calling thread works for (a
     * {@code LeaderOnly(partitions = ...)} run, {@link Term#execute}, or work carried from one by
     * context propagation), even if it has ended; the lowest partition's if it works for several;
     * empty elsewhere.
     */
    public Optional<Term> boundTerm() {
        for (Elector elector : electors) {
            Optional<Term> term = elector.boundTerm();
            if (term.isPresent()) {
                return term;
            }
        }
        return Optional.empty();
    }

    /**
     * Returns the partition an elector runs, when it is one of this election's partition electors
     * (for instance the elector of a term bound to the thread), else empty.
     */
    public OptionalInt partitionOf(Elector elector) {
        Integer partition = partitions.get(elector);
        return partition == null ? OptionalInt.empty() : OptionalInt.of(partition);
    }

    /**
     * Returns the elector of a partition, for components that take an {@link Elector} (such as a
     * {@code SlotLedger} beside the partition's keys). The partitioned election starts, stops and
     * closes it: read from it and run work in its terms, but do not start, stop, resign or close it
     * yourself.
     *
     * @throws IllegalArgumentException if the partition is out of range
     */
    public Elector elector(int partition) {
        return electors[checked(partition)];
    }

    /**
     * Returns a fencer for this instance's current term of a partition, or empty when it does not
     * hold the partition. Its writes are refused once a later term of the partition has written.
     */
    public Optional<Fencer> fencer(int partition) {
        return electors[checked(partition)].fencer();
    }

    /**
     * Returns a fencer of a partition for an explicit token (the token-driven style, for example a
     * token received in {@link PartitionListener#onAssigned}).
     */
    public Fencer fencer(int partition, long token) {
        return electors[checked(partition)].fencer(token);
    }

    /**
     * Returns the live members as of this instance's last look, sorted by id; newly seen ones still
     * settling included.
     */
    public List<String> members() {
        return membership.live();
    }

    /**
     * Reads every partition's holder and newest token from Redis, for display: two round trips per
     * partition, a snapshot that may be stale by the time it returns.
     *
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    public List<PartitionHolder> holders() {
        return PartitionHolders.read(redis, electors);
    }

    /**
     * Returns this instance's fair share as of its last balancing round, or -1 before the first.
     */
    public int share() {
        return balancer.share();
    }

    /** Returns how many partitions this instance has handed over to balance the load. */
    public long handedOver() {
        return balancer.handedOver();
    }

    /** Returns how many campaigns for a partition this instance has started; for tests. */
    long campaigns() {
        return balancer.campaigns();
    }

    /**
     * Returns how many partitions still held by another instance the last round dealt to this one,
     * to take on hearing their release; for tests.
     */
    int awaited() {
        return balancer.awaited();
    }

    /** Returns the failure of the last balancing round, or empty when it succeeded. */
    public Optional<Throwable> redisFailure() {
        return Optional.ofNullable(running.redisFailure());
    }

    /** Returns whether the election has been started and not stopped. */
    public boolean isRunning() {
        return running.isRunning();
    }

    /**
     * Joins the member set and starts balancing on a thread of its own; returns at once. A stopped
     * election may be started again: it joins anew, like a new instance.
     *
     * @throws IllegalStateException if already running
     */
    public void start() {
        running.start();
    }

    /**
     * Leaves gracefully: removes this instance from the member set, then stops every partition's
     * elector (each term drains and releases its lease, and the others take each partition over as
     * they hear its release). Waits at most a time to live for the leave, then the drain timeout
     * plus the time to live for the partitions (a leave that Redis holds up is made from the
     * stopping thread, waited for one more time to live); returns at once when not running. The
     * election may be {@linkplain #start() started} again. Meant for an application thread, not a
     * {@link PartitionListener} callback.
     */
    public void stop() {
        running.stop();
    }

    /** Runs a balancing round now, as a release by another instance does; for tests. */
    void wake() {
        running.wake();
    }

    /** Stops the election; see {@link #stop()}. It may be started again afterwards. */
    @Override
    public void close() {
        stop();
    }

    private int checked(int partition) {
        if (partition < 0 || partition >= electors.length) {
            throw new IllegalArgumentException(
                    "redlease: partition must be between 0 and "
                            + (electors.length - 1)
                            + "; got "
                            + partition);
        }
        return partition;
    }

    @Override
    public String toString() {
        return "PartitionedElection["
                + name()
                + ", partitions="
                + electors.length
                + ", instanceId="
                + instanceId()
                + "]";
    }

    private static StringRedisTemplate stringTemplate(
            @Nullable RedisConnectionFactory connectionFactory) {
        if (connectionFactory == null) {
            throw new IllegalArgumentException("redlease: connectionFactory must not be null");
        }
        StringRedisTemplate template = new StringRedisTemplate(connectionFactory);
        template.afterPropertiesSet();
        return template;
    }
}
