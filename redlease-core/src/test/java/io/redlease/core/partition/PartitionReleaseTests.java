package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.StepDownReason;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.RespClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Partitions released by one instance are taken by the instances below their share on hearing the
 * release, not at a balancing round: the balance interval is minutes long and the instances' clock
 * is the test's own, so no regular round runs while a partition moves (the quick rounds of an
 * instance below its share come a fifth of an interval, two minutes, after its last round, later
 * than each move is awaited). The test moves the clock and wakes the instances only to let them
 * join.
 */
@ExtendWith(RedisExtension.class)
class PartitionReleaseTests {

    private static final int PARTITIONS = 24;

    private static final Duration INTERVAL = Duration.ofMinutes(10);

    private static final Duration TTL = Duration.ofMinutes(30);

    /** Shorter than a quick round (INTERVAL / 5): a move that waited for a round fails here. */
    private static final Duration MOVE = Duration.ofSeconds(30);

    private final Connections connections = new Connections();

    /** Whether the listeners throw, after recording a won term. */
    private volatile boolean throwing;

    /** The partition count of the instances a test creates. */
    private int partitions = PARTITIONS;

    private final AtomicLong clock = new AtomicLong();

    private final List<PartitionedElection> instances = new CopyOnWriteArrayList<>();

    /** Every term won: partition, token, instance. */
    private final List<Won> won = new CopyOnWriteArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Connections.unique(info);
    }

    @AfterEach
    void tearDown() {
        instances.forEach(PartitionedElection::close);
        connections.close();
    }

    private PartitionedElection instance(String id) {
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder(name, partitions)
                        .ttl(TTL)
                        .renewInterval(INTERVAL)
                        .balanceInterval(INTERVAL)
                        .instanceId(id)
                        .listener(
                                new PartitionListener() {
                                    @Override
                                    public void onAssigned(int partition, long token) {
                                        won.add(new Won(partition, token, id));
                                        if (throwing) {
                                            throw new IllegalStateException("listener fails");
                                        }
                                    }

                                    @Override
                                    public void onRevoked(
                                            int partition, long token, StepDownReason reason) {
                                        if (throwing) {
                                            throw new AssertionError("listener fails");
                                        }
                                    }
                                })
                        .build();
        PartitionedElection instance =
                new PartitionedElection(connections.to(server), config, clock::get);
        instances.add(instance);
        return instance;
    }

    /**
     * Starts instances and lets them join, with the clock moved and a round woken where a real
     * clock would have run one: every instance sees the others before it counts them, then counts
     * them all and campaigns for its share.
     */
    private List<PartitionedElection> joined(List<PartitionedElection> running, String... ids) {
        List<PartitionedElection> started = new ArrayList<>();
        for (String id : ids) {
            PartitionedElection instance = instance(id);
            instance.start();
            started.add(instance);
        }
        List<PartitionedElection> all = new ArrayList<>(running);
        all.addAll(started);
        List<String> everyone = all.stream().map(PartitionedElection::instanceId).toList();
        for (PartitionedElection instance : started) {
            await().atMost(MOVE).until(() -> instance.members().contains(instance.instanceId()));
        }
        // Every instance hears releases before it joins, as it does once it has run for a while.
        await().atMost(MOVE).until(() -> listening() >= all.size());
        clock.addAndGet(INTERVAL.toNanos() / 2);
        for (PartitionedElection instance : all) {
            instance.wake();
        }
        for (PartitionedElection instance : all) {
            await().atMost(MOVE).until(() -> instance.members().containsAll(everyone));
        }
        clock.addAndGet(INTERVAL.toNanos());
        // The newcomers first: they campaign for what the others hand over.
        for (PartitionedElection instance : started) {
            instance.wake();
        }
        for (PartitionedElection instance : running) {
            instance.wake();
        }
        return all;
    }

    /** Returns how many instances' release subscriptions are in place. */
    private long listening() {
        try (RespClient client = RespClient.connect(server.host(), server.port())) {
            List<?> reply =
                    (List<?>)
                            client.command(
                                    "PUBSUB",
                                    "NUMSUB",
                                    PartitionedElection.electionName(name, 0) + ":released");
            return reply == null ? 0 : ((Number) reply.get(1)).longValue();
        }
    }

    private void awaitBalanced(List<PartitionedElection> live) {
        await().atMost(MOVE)
                .untilAsserted(
                        () -> {
                            Set<Integer> held = new TreeSet<>();
                            int min = Integer.MAX_VALUE;
                            int max = 0;
                            for (PartitionedElection instance : live) {
                                Set<Integer> owned = instance.owned();
                                min = Math.min(min, owned.size());
                                max = Math.max(max, owned.size());
                                for (int partition : owned) {
                                    assertThat(held.add(partition))
                                            .as("second holder of %d", partition)
                                            .isTrue();
                                }
                            }
                            assertThat(held).hasSize(partitions);
                            assertThat(max - min).isLessThanOrEqualTo(1);
                        });
    }

    private static Map<Integer, String> holders(List<PartitionedElection> live) {
        Map<Integer, String> holders = new HashMap<>();
        for (PartitionedElection instance : live) {
            instance.owned().forEach(p -> holders.put(p, instance.instanceId()));
        }
        return holders;
    }

    private static long campaigns(List<PartitionedElection> live) {
        return live.stream().mapToLong(PartitionedElection::campaigns).sum();
    }

    @Test
    void aLeaversPartitionsAreTakenOnTheirReleaseEachByOneInstanceBelowItsShare() {
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c", "d");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= PARTITIONS);
        assertThat(won).as("a cold start moves nothing").hasSize(PARTITIONS);
        PartitionedElection leaver = live.get(1);
        Set<Integer> left = leaver.owned();
        List<PartitionedElection> survivors = List.of(live.get(0), live.get(2), live.get(3));
        Map<Integer, String> before = holders(survivors);
        long campaignsBefore = campaigns(survivors);
        int wonBefore = won.size();

        leaver.close();

        awaitBalanced(survivors);
        await().atMost(MOVE).until(() -> won.size() >= wonBefore + left.size());
        List<Won> all = List.copyOf(won);
        List<Won> moves = all.subList(wonBefore, all.size());
        assertThat(moves).extracting(Won::partition).containsExactlyInAnyOrderElementsOf(left);
        assertThat(campaigns(survivors) - campaignsBefore)
                .as("campaigns started: one per partition released, none lost to another")
                .isEqualTo(left.size());
        Map<Integer, String> after = holders(survivors);
        before.forEach(
                (partition, holder) ->
                        assertThat(after.get(partition))
                                .as("partition %d stays with %s", partition, holder)
                                .isEqualTo(holder));
    }

    @Test
    void aNewcomerTakesWhatTheOthersHandOverOnHearingEachRelease() {
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= PARTITIONS);
        Map<Integer, String> before = holders(live);
        long campaignsBefore = campaigns(live);
        int wonBefore = won.size();

        live = joined(live, "d");

        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= wonBefore + PARTITIONS / 4);
        PartitionedElection newcomer = live.get(3);
        List<Won> all = List.copyOf(won);
        List<Won> moves = all.subList(wonBefore, all.size());
        assertThat(moves).hasSize(PARTITIONS / 4).allMatch(w -> w.instance().equals("d"));
        assertThat(newcomer.campaigns()).isEqualTo(PARTITIONS / 4);
        assertThat(campaigns(live.subList(0, 3))).isEqualTo(campaignsBefore);
        Map<Integer, String> after = holders(live);
        before.forEach(
                (partition, holder) ->
                        assertThat(after.get(partition))
                                .as("partition %d stays or goes to the newcomer", partition)
                                .isIn(holder, "d"));
    }

    @Test
    void aNewcomerAwaitsTheOthersSurplusAndTakesEachOnItsReleaseWithoutARound(
            @Dedicated RedisServer own) {
        server = own; // counts the commands of this test's instances only
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c");
        awaitBalanced(live);
        PartitionedElection newcomer = instance("d");
        newcomer.start();
        List<PartitionedElection> all = new ArrayList<>(live);
        all.add(newcomer);
        for (PartitionedElection instance : all) {
            await().atMost(MOVE).until(() -> instance.members().contains("d"));
        }
        await().atMost(MOVE).until(() -> listening() >= all.size());
        clock.addAndGet(INTERVAL.toNanos() + 1);

        // Joined: it deals itself the others' surplus, still held, before they count it.
        newcomer.wake();
        await().atMost(MOVE).until(() -> newcomer.awaited() == PARTITIONS / 4);
        long reads = mgets();
        live.forEach(PartitionedElection::wake);

        awaitBalanced(all);
        assertThat(newcomer.owned()).hasSize(PARTITIONS / 4);
        assertThat(newcomer.campaigns()).isEqualTo(PARTITIONS / 4);
        assertThat(mgets()).as("reads of the holders while the surplus moved").isEqualTo(reads);
    }

    /** Returns how many MGETs (the balancing rounds' reads of the holders) the server has run. */
    private long mgets() {
        try (RespClient client = RespClient.connect(server.host(), server.port())) {
            String stats = String.valueOf(client.command("INFO", "commandstats"));
            java.util.regex.Matcher calls =
                    java.util.regex.Pattern.compile("cmdstat_mget:calls=(\\d+)").matcher(stats);
            return calls.find() ? Long.parseLong(calls.group(1)) : 0;
        }
    }

    @Test
    void theOthersHearAJoinAndALeaveAndLookAtOnce() {
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c");
        awaitBalanced(live);
        long campaignsBefore = campaigns(live);

        // Nobody is woken and the clock stands still: the next regular round is minutes away.
        PartitionedElection newcomer = instance("d");
        newcomer.start();

        for (PartitionedElection instance : live) {
            await().atMost(MOVE).until(() -> instance.members().contains("d"));
        }
        // Seen, not counted yet: it settles first, and nothing moves meanwhile.
        assertThat(live).allSatisfy(i -> assertThat(i.owned()).hasSize(PARTITIONS / 3));
        assertThat(campaigns(live)).isEqualTo(campaignsBefore);

        newcomer.close();

        for (PartitionedElection instance : live) {
            await().atMost(MOVE).until(() -> !instance.members().contains("d"));
        }
    }

    @Test
    void twoInstancesLeavingAtOnceHaveTheirPartitionsTakenOnTheirRelease() throws Exception {
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c", "d", "e", "f");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= PARTITIONS);
        List<PartitionedElection> leavers = List.of(live.get(1), live.get(2));
        Set<Integer> left = new TreeSet<>(leavers.get(0).owned());
        left.addAll(leavers.get(1).owned());
        List<PartitionedElection> survivors =
                List.of(live.get(0), live.get(3), live.get(4), live.get(5));
        Map<Integer, String> before = holders(survivors);
        int wonBefore = won.size();

        Thread other = new Thread(leavers.get(1)::close);
        other.start();
        leavers.get(0).close();
        other.join();

        awaitBalanced(survivors);
        await().atMost(MOVE).until(() -> won.size() >= wonBefore + left.size());
        List<Won> all = List.copyOf(won);
        List<Won> moves = all.subList(wonBefore, all.size());
        assertThat(moves).extracting(Won::partition).containsExactlyInAnyOrderElementsOf(left);
        Map<Integer, String> after = holders(survivors);
        before.forEach(
                (partition, holder) ->
                        assertThat(after.get(partition))
                                .as("partition %d stays with %s", partition, holder)
                                .isEqualTo(holder));
    }

    @Test
    void aLeaveWhileANewcomerJoinsLosesAndDoublesNothing() {
        List<PartitionedElection> live = joined(List.of(), "b", "c", "d");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= PARTITIONS);
        PartitionedElection leaver = live.get(1);

        PartitionedElection newcomer = instance("a");
        newcomer.start();
        await().atMost(MOVE).until(() -> newcomer.members().contains("a"));
        leaver.close();
        List<PartitionedElection> survivors = List.of(live.get(0), live.get(2), newcomer);
        clock.addAndGet(INTERVAL.toNanos() / 2);
        survivors.forEach(PartitionedElection::wake);
        for (PartitionedElection instance : survivors) {
            await().atMost(MOVE)
                    .until(() -> instance.members().containsAll(List.of("a", "b", "d")));
        }
        clock.addAndGet(INTERVAL.toNanos());
        newcomer.wake();
        live.get(0).wake();
        live.get(2).wake();

        awaitBalanced(survivors);
    }

    @Test
    void withAnUnevenCountANewcomerSortingFirstTakesOnlyItsShareAndALeaverGivesOnlyItsOwn() {
        partitions = 10;
        // Java's order: "10" < "9" < "B" < "a".
        List<PartitionedElection> live = joined(List.of(), "9", "B", "a");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= partitions);
        assertThat(live.get(0).owned()).hasSize(4);
        Map<Integer, String> before = holders(live);
        int wonBefore = won.size();

        live = joined(live, "10");

        awaitBalanced(live);
        PartitionedElection newcomer = live.get(3);
        await().atMost(MOVE).until(() -> won.size() >= wonBefore + 3);
        assertThat(newcomer.owned()).hasSize(3);
        assertThat(newcomer.campaigns()).isEqualTo(3);
        List<Won> moves = List.copyOf(won).subList(wonBefore, won.size());
        assertThat(moves).hasSize(3).allMatch(w -> w.instance().equals("10"));
        Map<Integer, String> joinedHolders = holders(live);
        before.forEach(
                (partition, holder) -> assertThat(joinedHolders.get(partition)).isIn(holder, "10"));

        PartitionedElection leaver = live.get(0);
        Set<Integer> left = leaver.owned();
        List<PartitionedElection> survivors = List.of(live.get(1), live.get(2), newcomer);
        int wonBeforeLeave = won.size();
        leaver.close();

        awaitBalanced(survivors);
        await().atMost(MOVE).until(() -> won.size() >= wonBeforeLeave + left.size());
        List<Won> leaveMoves = List.copyOf(won).subList(wonBeforeLeave, won.size());
        assertThat(leaveMoves).extracting(Won::partition).containsExactlyInAnyOrderElementsOf(left);
    }

    @Test
    void listenersThatThrowDisturbNeitherTheBalanceNorALeave() {
        throwing = true;
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= PARTITIONS);
        Set<Integer> left = live.get(1).owned();
        int wonBefore = won.size();

        live.get(1).close();

        List<PartitionedElection> survivors = List.of(live.get(0), live.get(2));
        awaitBalanced(survivors);
        await().atMost(MOVE).until(() -> won.size() >= wonBefore + left.size());
        List<Won> moves = List.copyOf(won).subList(wonBefore, won.size());
        assertThat(moves).extracting(Won::partition).containsExactlyInAnyOrderElementsOf(left);
    }

    @Test
    void instancesLeavingTogetherWhileHearingEachOthersReleasesLeaveNothingRunning()
            throws Exception {
        List<PartitionedElection> live = joined(List.of(), "a", "b", "c");
        awaitBalanced(live);
        await().atMost(MOVE).until(() -> won.size() >= PARTITIONS);

        // All three leave at once, each possibly woken by the others' releases as it leaves.
        Thread first = new Thread(live.get(0)::close);
        Thread second = new Thread(live.get(1)::close);
        first.start();
        second.start();
        live.get(2).close();
        first.join();
        second.join();

        for (PartitionedElection instance : live) {
            assertThat(instance.owned()).as("%s owns", instance.instanceId()).isEmpty();
            for (int partition = 0; partition < PARTITIONS; partition++) {
                assertThat(instance.elector(partition).isRunning())
                        .as("%s runs partition %d", instance.instanceId(), partition)
                        .isFalse();
            }
        }
        assertThat(live.get(0).holders())
                .allMatch(holder -> holder.instanceId() == null, "no lease held");
        try (RespClient client = RespClient.connect(server.host(), server.port())) {
            assertThat((List<?>) client.command("ZRANGE", Membership.membersKey(name), "0", "-1"))
                    .as("members left")
                    .isEmpty();
        }
    }

    record Won(int partition, long token, String instance) {}
}
