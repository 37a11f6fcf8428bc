package io.redlease.core.partition;

import io.redlease.core.Elector;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;

/**
 * One instance's balancing rounds: refresh the membership, work out this instance's fair share,
 * hand surplus partitions over and campaign for free ones while below it.
 *
 * <p>The fair share comes from the sorted list of counted members: with {@code n} partitions and
 * {@code m} members, every member's share is {@code n / m}, and the first {@code n % m} members in
 * id order get one more, so the shares add up to {@code n} and differ by at most one. A join lowers
 * no share by more than what the newcomer's share takes in total, and a leave lowers none: with
 * agreeing views a join moves exactly the newcomer's share and a leave moves only the leaver's
 * partitions.
 *
 * <p>A new instance campaigns only once it has joined (see {@link Membership}), so instances that
 * start together split the partitions between them instead of piling them on whoever looked first.
 * Which partitions each campaigns for is {@linkplain #dealt dealt} from the same view on every
 * instance, so instances below their share do not campaign for the same partition.
 *
 * <p>A round reads who holds which partition only when it needs to (while below the share, or to
 * check the partitions it campaigns for), with one {@code MGET} of every partition's lease key: one
 * round trip on a standalone server or Sentinel; on Redis Cluster the client splits it by slot and
 * sends the parts concurrently.
 *
 * <p>Rounds run on the partitioned election's own balancing thread, one at a time; the electors run
 * on the engine's shared threads.
 */
final class Balancer {

    private final Elector[] electors;

    private final RedisOperations<String, String> redis;

    private final byte[][] leaseKeys;

    private final Membership membership;

    private final String instanceId;

    @SuppressWarnings("unchecked")
    private final @Nullable CompletableFuture<Void>[] stopping;

    /** While below its share, an instance looks this many times per balance interval. */
    static final int QUICK_ROUNDS = 5;

    private final long balanceNanos;

    private final long quickNanos;

    private final long quickWindowNanos;

    private final LongSupplier clock;

    /**
     * Whether the last round ended below the share, and since when it has (clock nanos), or since
     * it last took a partition.
     */
    private boolean shortOf;

    /**
     * Whether an elector was started for a partition since the last round: by that round's look, or
     * on hearing a release ({@link #take}) since.
     */
    private boolean took;

    private long shortSince;

    private static final long NOT_FREE = Long.MIN_VALUE;

    /** Since when each partition has been seen free at every look that read the holders. */
    private final long[] freeSince;

    private volatile int share = -1;

    private final AtomicLong handedOver = new AtomicLong();

    private final AtomicLong campaigns = new AtomicLong();

    /**
     * The orphans still held (by a former member, or a member above its share) that the last look
     * dealt to other members, or null when it read no holders: the first release heard of each
     * needs no round here.
     */
    private volatile boolean @Nullable [] dealtToOthers;

    private static final boolean[] NONE = new boolean[0];

    /**
     * The partitions the last look dealt to this instance that were still held (by a former member,
     * or a member above its share): each is campaigned for as soon as its release is heard ({@link
     * #take}).
     */
    private volatile boolean[] awaited = NONE;

    /** Whether the election is leaving; see {@link #leaving()}. */
    private volatile boolean leaving;

    /** 1 for each partition whose release was heard since the current look began its read. */
    private final AtomicIntegerArray heardDuringRead;

    Balancer(
            Elector[] electors,
            RedisOperations<String, String> redis,
            Membership membership,
            String instanceId,
            Duration balanceInterval,
            Duration settle,
            LongSupplier clock) {
        this.electors = electors;
        this.balanceNanos = balanceInterval.toNanos();
        this.quickNanos = Math.max(1, balanceNanos / QUICK_ROUNDS);
        this.quickWindowNanos = settle.plus(balanceInterval.multipliedBy(2)).toNanos();
        this.clock = clock;
        this.redis = redis;
        this.leaseKeys = new byte[electors.length][];
        for (int partition = 0; partition < electors.length; partition++) {
            leaseKeys[partition] =
                    (electors[partition].name() + ":leader").getBytes(StandardCharsets.UTF_8);
        }
        this.membership = membership;
        this.instanceId = instanceId;
        this.stopping = newFutures(electors.length);
        this.freeSince = new long[electors.length];
        Arrays.fill(freeSince, NOT_FREE);
        this.heardDuringRead = new AtomicIntegerArray(electors.length);
    }

    @SuppressWarnings("unchecked")
    private static @Nullable CompletableFuture<Void>[] newFutures(int length) {
        return (CompletableFuture<Void>[]) new CompletableFuture<?>[length];
    }

    /**
     * Returns a member's fair share.
     *
     * @param partitions the partition count
     * @param members the counted members, sorted, including {@code member}
     * @param member the member whose share to compute
     */
    static int share(int partitions, List<String> members, String member) {
        int count = members.size();
        int rank = members.indexOf(member);
        return partitions / count + (rank < partitions % count ? 1 : 0);
    }

    /**
     * Runs one round and returns when the next should run: after a balance interval, or after a
     * fifth of one while this instance has joined and found fewer free partitions than its share
     * wants (partitions the others hand over, or whose holder died, are then taken within
     * milliseconds of their release rather than at the next regular round). The quick rounds go on
     * for the settle period plus two balance intervals after the shortfall began or this instance
     * last took a partition, which covers the others noticing a newcomer and letting its share go
     * one after another; a shortfall with no progress for longer (a holder that does not balance)
     * is looked at once per balance interval. While a new member settles, the next round comes no
     * later than the moment it counts, so its share goes without delay; while this instance joins,
     * no later than the end of its join period, however often rounds were woken meanwhile. A
     * partition this instance campaigns for and has not won yet also keeps the quick rounds going,
     * so one lost to another instance is replaced at the next quick round. Another instance's
     * release wakes a round at once (see {@link BalancingThread#wake()}), and so do another
     * member's join and leave.
     *
     * @return nanoseconds until the next round
     * @throws org.springframework.dao.DataAccessException if Redis fails; the round is abandoned
     *     and the partitions already held stay held
     */
    long round() {
        boolean below = look();
        long now = clock.getAsLong();
        long next = balanceNanos;
        if (!below) {
            shortOf = false;
        } else {
            if (!shortOf || took) {
                shortOf = true;
                shortSince = now;
            }
            if (now - shortSince < quickWindowNanos) {
                next = quickNanos;
            }
        }
        took = false;
        return Math.min(next, Math.min(membership.untilNextCounts(), membership.untilJoined()));
    }

    /**
     * Balances once; returns whether this instance stays below its share or still waits for a
     * partition it campaigns for.
     */
    private boolean look() {
        List<String> members = membership.refresh();
        int target = share(electors.length, members, instanceId);
        share = target;
        List<Integer> owned = new ArrayList<>();
        List<Integer> contending = new ArrayList<>();
        for (int partition = 0; partition < electors.length; partition++) {
            CompletableFuture<Void> stop = stopping[partition];
            if (stop != null && stop.isDone()) {
                stopping[partition] = null;
                stop = null;
            }
            Elector elector = electors[partition];
            if (stop != null || !elector.isRunning()) {
                continue;
            }
            if (elector.isLeader()) {
                owned.add(partition);
            } else {
                contending.add(partition);
            }
        }
        awaited = NONE;
        if (owned.size() > target) {
            Arrays.fill(freeSince, NOT_FREE);
            dealtToOthers = null;
            for (int i = owned.size() - 1; i >= target; i--) {
                stop(owned.get(i));
                handedOver.incrementAndGet();
            }
            contending.forEach(this::stop);
            return false;
        }
        if (!membership.joined()) {
            dealtToOthers = null;
            return false;
        }
        int wanted = target - owned.size();
        if (wanted == 0 && contending.isEmpty()) {
            Arrays.fill(freeSince, NOT_FREE);
            dealtToOthers = null;
            return false;
        }
        for (int partition = 0; partition < electors.length; partition++) {
            heardDuringRead.set(partition, 0);
        }
        @Nullable String[] holders = holders();
        long now = clock.getAsLong();
        boolean[] mine = dealt(members, holders);
        // The release of a partition dealt to another that was heard since the read began has
        // passed (and was taken, when heard, for the one the last look expected): a later release
        // comes from whoever took it since.
        boolean[] others = dealtToOthers;
        if (others != null) {
            for (int partition = 0; partition < others.length; partition++) {
                if (others[partition] && heardDuringRead.get(partition) == 1) {
                    others[partition] = false;
                }
            }
        }
        int kept = 0;
        int pending = 0;
        for (int partition : contending) {
            String holder = holders[partition];
            if (electors[partition].isLeader() || instanceId.equals(holder)) {
                kept++; // won since the look began
            } else if (kept < wanted && mine[partition]) {
                kept++;
                pending++;
            } else {
                stop(partition);
            }
        }
        boolean[] awaiting = new boolean[electors.length];
        int waiting = 0;
        for (int partition = 0; partition < electors.length && kept < wanted; partition++) {
            if (mine[partition] && startable(partition)) {
                if (holders[partition] == null) {
                    campaign(partition);
                } else {
                    awaiting[partition] = true; // still held, about to be released: see take()
                    waiting++;
                }
                kept++;
                pending++;
            }
        }
        awaited = awaiting;
        // An awaited partition whose release has been heard since the read began is as good as
        // free: it is taken at the end of this look, and not given up below.
        boolean[] releasing = new boolean[electors.length];
        for (int partition = 0; partition < awaiting.length; partition++) {
            if (awaiting[partition] && heardDuringRead.get(partition) == 1) {
                releasing[partition] = true;
                waiting--;
            }
        }
        // A free partition dealt to another member that has left it free for a whole balance
        // interval (its view of the members differs, or it does not balance) goes to whoever is
        // below its share, looking from evenly spaced starting points by rank; before a partition
        // still held that this instance awaits, whose holder may not hand it over either (its view
        // differs, or it does not balance).
        long offset = (long) members.indexOf(instanceId) * electors.length / members.size();
        for (int i = 0; i < electors.length; i++) {
            int partition = (int) ((offset + i) % electors.length);
            if (holders[partition] != null) {
                freeSince[partition] = NOT_FREE;
                continue;
            }
            if (freeSince[partition] == NOT_FREE) {
                freeSince[partition] = now;
            }
            if ((kept < wanted || waiting > 0)
                    && now - freeSince[partition] >= balanceNanos
                    && startable(partition)) {
                if (kept >= wanted) {
                    int last = awaiting.length - 1;
                    while (!awaiting[last] || releasing[last]) {
                        last--;
                    }
                    awaiting[last] = false;
                    waiting--;
                    kept--;
                    pending--;
                }
                campaign(partition);
                kept++;
                pending++;
            }
        }
        // Released after the read began: heard before the awaiting was in place, so no take()
        // follows (one heard since then has its take() queued).
        for (int partition = 0; partition < releasing.length; partition++) {
            if (releasing[partition]) {
                take(partition);
            }
        }
        return kept < wanted || pending > 0;
    }

    private void campaign(int partition) {
        if (leaving) {
            return;
        }
        electors[partition].start();
        campaigns.incrementAndGet();
        took = true;
    }

    private boolean startable(int partition) {
        return stopping[partition] == null && !electors[partition].isRunning();
    }

    /**
     * Deals the orphaned partitions to the counted members below their share and returns which went
     * to this instance. Orphaned are the partitions whose lease is free or held by an instance that
     * is no longer a member (one that left gracefully removes itself before it releases anything),
     * and the surplus of a counted member above its share, which it is about to hand over: its
     * highest partitions, as it picks them. In ascending order, each member below its share in id
     * order gets the next run of as many orphans as it lacks. Instances that agree on the members
     * and the holders deal alike, so each campaigns for its own orphans only; and as a member takes
     * its own, its lack and its run shrink together, so the others' runs stay where they were while
     * partitions move.
     */
    boolean[] dealt(List<String> members, @Nullable String[] holders) {
        Set<String> live = new HashSet<>(membership.live());
        live.add(instanceId);
        Map<String, List<Integer>> heldBy = new HashMap<>();
        List<Integer> orphans = new ArrayList<>();
        for (int partition = 0; partition < holders.length; partition++) {
            String holder = holders[partition];
            if (holder == null || !live.contains(holder)) {
                orphans.add(partition);
            } else {
                heldBy.computeIfAbsent(holder, h -> new ArrayList<>()).add(partition);
            }
        }
        // A counted member above its share hands its highest partitions over (see look()): they
        // are dealt like orphans, so whoever gets one takes it on hearing its release.
        Map<String, Integer> held = new HashMap<>();
        for (Map.Entry<String, List<Integer>> entry : heldBy.entrySet()) {
            List<Integer> own = entry.getValue();
            int keeps = own.size();
            if (members.contains(entry.getKey())) {
                keeps = Math.min(keeps, share(holders.length, members, entry.getKey()));
                orphans.addAll(own.subList(keeps, own.size()));
            }
            held.put(entry.getKey(), keeps);
        }
        orphans.sort(null);
        boolean[] mine = new boolean[holders.length];
        boolean[] others = new boolean[holders.length];
        int next = 0;
        for (String member : members) {
            if (next >= orphans.size()) {
                break;
            }
            int lacks = share(holders.length, members, member) - held.getOrDefault(member, 0);
            if (lacks <= 0) {
                continue;
            }
            int end = Math.min(orphans.size(), next + lacks);
            boolean mineNow = member.equals(instanceId);
            for (int i = next; i < end; i++) {
                int orphan = orphans.get(i);
                if (mineNow) {
                    mine[orphan] = true;
                } else if (holders[orphan] != null) {
                    // Only the holder's coming release is the other's to hear; a release of a free
                    // one means someone took it since, and the view has changed.
                    others[orphan] = true;
                }
            }
            next = end;
        }
        dealtToOthers = others;
        return mine;
    }

    /** Reads every partition's lease holder at once; null where the lease is free. */
    private @Nullable String[] holders() {
        List<byte[]> values =
                redis.execute(
                        (RedisCallback<List<byte[]>>)
                                connection -> connection.stringCommands().mGet(leaseKeys));
        @Nullable String[] holders = new String[leaseKeys.length];
        if (values == null || values.size() != leaseKeys.length) {
            throw new InvalidDataAccessApiUsageException(
                    "redlease: unexpected reply to the read of "
                            + leaseKeys.length
                            + " lease keys: "
                            + (values == null ? "none" : values.size() + " values"));
        }
        for (int partition = 0; partition < holders.length; partition++) {
            byte[] value = values.get(partition);
            holders[partition] = value == null ? null : new String(value, StandardCharsets.UTF_8);
        }
        return holders;
    }

    /** Stops every partition's elector: terms end gracefully and their leases are released. */
    List<CompletableFuture<Void>> stopAll() {
        List<CompletableFuture<Void>> stops = new ArrayList<>();
        for (int partition = 0; partition < electors.length; partition++) {
            CompletableFuture<Void> stop = stopping[partition];
            if (electors[partition].isRunning() && stop == null) {
                stop(partition);
                stop = stopping[partition];
            }
            if (stop != null) {
                stops.add(stop);
            }
            stopping[partition] = null;
        }
        Arrays.fill(freeSince, NOT_FREE);
        dealtToOthers = null;
        awaited = NONE;
        share = -1;
        return stops;
    }

    private void stop(int partition) {
        stopping[partition] = electors[partition].stopAsync();
    }

    /** Returns this instance's fair share as of the last round, or -1 before the first. */
    int share() {
        return share;
    }

    /** Returns how many partitions this instance has handed over to balance the load. */
    long handedOver() {
        return handedOver.get();
    }

    /**
     * Returns whether the last look dealt this instance a partition still held (by a former member,
     * or a member above its share), which it campaigns for when it hears the release. Any thread.
     */
    boolean awaits(int partition) {
        boolean[] waiting = awaited;
        return partition < waiting.length && waiting[partition];
    }

    /** Returns how many partitions {@link #awaits} is true of. */
    int awaited() {
        int count = 0;
        for (boolean waiting : awaited) {
            count += waiting ? 1 : 0;
        }
        return count;
    }

    /**
     * Campaigns for a partition dealt to this instance whose release it has heard, without a round
     * (no round trip before the campaign's own acquire). On the balancing thread.
     */
    void take(int partition) {
        boolean[] waiting = awaited;
        if (partition < waiting.length && waiting[partition]) {
            waiting[partition] = false;
            if (startable(partition)) {
                campaign(partition);
            }
        }
    }

    /**
     * Returns whether another instance's release of a partition may need a round here: not when
     * this instance runs the partition's elector already (its campaign hears the release), nor for
     * the first release of a partition the last look found held (by a former member, or a member
     * above its share) and dealt to another member. A later release of it, or that of a partition
     * dealt to another while free, comes from whoever took it since, which the last look did not
     * see. Any thread.
     */
    boolean needsRound(int partition) {
        if (electors[partition].isRunning()) {
            return false;
        }
        boolean[] others = dealtToOthers;
        if (others == null || !others[partition]) {
            return true;
        }
        // The holder's release, expected once: a later one is the new holder's.
        others[partition] = false;
        return false;
    }

    /**
     * Notes that another instance's release of a partition was heard. A look that finds the
     * partition still held in its read and awaits it campaigns for it at once when the release came
     * after that read began: the read may have preceded the release, and its announcement has
     * passed. Any thread.
     */
    void released(int partition) {
        heardDuringRead.set(partition, 1);
    }

    /**
     * Says the election is leaving: a look or a take still under way campaigns for nothing more, as
     * the leave that follows would only release it again; nor does one that outlives the stop (a
     * client that does not heed the interrupt). {@link #joining} ends it. Any thread.
     */
    void leaving() {
        leaving = true;
    }

    /** Says the election runs again: its rounds may campaign. Before the run's first round. */
    void joining() {
        leaving = false;
    }

    /** Returns how many campaigns for a partition this instance has started. */
    long campaigns() {
        return campaigns.get();
    }
}
