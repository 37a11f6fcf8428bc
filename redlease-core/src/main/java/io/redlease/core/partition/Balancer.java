package io.redlease.core.partition;

import io.redlease.core.Elector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

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
 *
 * <p>Rounds run on the partitioned election's own balancing thread, one at a time; the electors run
 * on the engine's shared threads.
 */
final class Balancer {

    private final Elector[] electors;

    private final Membership membership;

    private final String instanceId;

    @SuppressWarnings("unchecked")
    private final @Nullable CompletableFuture<Void>[] stopping;

    private volatile int share = -1;

    private final AtomicLong handedOver = new AtomicLong();

    Balancer(Elector[] electors, Membership membership, String instanceId) {
        this.electors = electors;
        this.membership = membership;
        this.instanceId = instanceId;
        this.stopping = newFutures(electors.length);
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
     * Runs one round.
     *
     * @throws org.springframework.dao.DataAccessException if Redis fails; the round is abandoned
     *     and the partitions already held stay held
     */
    void round() {
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
        if (owned.size() > target) {
            for (int i = owned.size() - 1; i >= target; i--) {
                stop(owned.get(i));
                handedOver.incrementAndGet();
            }
            contending.forEach(this::stop);
            return;
        }
        if (!membership.joined()) {
            return;
        }
        int wanted = target - owned.size();
        // Members look for free partitions from evenly spaced starting points (by rank), so
        // instances that start together rarely campaign for the same partition.
        long offset = (long) members.indexOf(instanceId) * electors.length / members.size();
        int kept = 0;
        for (int partition : contending) {
            if (kept < wanted && freeOrMine(partition)) {
                kept++;
            } else {
                stop(partition);
            }
        }
        for (int i = 0; i < electors.length && kept < wanted; i++) {
            int partition = (int) ((offset + i) % electors.length);
            Elector elector = electors[partition];
            if (stopping[partition] == null && !elector.isRunning() && elector.holder().isEmpty()) {
                elector.start();
                kept++;
            }
        }
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
        share = -1;
        return stops;
    }

    private boolean freeOrMine(int partition) {
        return electors[partition]
                .holder()
                .map(holder -> holder.instanceId().equals(instanceId))
                .orElse(true);
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
}
