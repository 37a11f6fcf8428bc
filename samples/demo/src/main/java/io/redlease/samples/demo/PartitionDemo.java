package io.redlease.samples.demo;

import static io.redlease.samples.demo.Console.chapter;
import static io.redlease.samples.demo.Console.say;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The demo's partition chapter: copies of the partitioned-job sample share 16 tenant partitions;
 * the chapter shows the assignment, as Redis has it, after four start, a fifth joins, one leaves
 * gracefully and one is killed, then checks it: every partition held by exactly one live instance
 * (Redis and the instances' own events agree), shares within one of each other, a new token on
 * every move, only the leaver's partitions moved, and no fenced write refused.
 */
final class PartitionDemo {

    private static final int PARTITIONS = 16;

    private static final Duration TTL = Duration.ofSeconds(2);

    private static final long BALANCE_WAIT_MILLIS = 120_000;

    private final Redis redis;

    private final Instances instances;

    /** The partitioned election's name: the sample derives it from redlease.name and the id. */
    private final String election;

    private final String mainName;

    private final Set<String> live = new TreeSet<>();

    private final SelfCheck selfCheck = new SelfCheck();

    private final Map<String, String> measured = new LinkedHashMap<>();

    /** Whether partition events are printed (not the initial sixteen assignments). */
    private volatile boolean printing;

    PartitionDemo(Redis redis, Path jar, long start) {
        this.redis = redis;
        String base = "tenants-" + UUID.randomUUID().toString().substring(0, 8);
        this.mainName = "{" + base + "}";
        this.election = base + ":tenants";
        this.instances = new Instances(jar, redis.url, start, this::describe);
    }

    int run() throws Exception {
        chapter(
                "4. Partitioned leadership: "
                        + PARTITIONS
                        + " tenant partitions over the instances");
        say(
                "Partitioned election %s, lease TTL %ss; node-1 to node-4 are copies of"
                        + " samples/partitioned-job, each syncing the tenants of the partitions it owns",
                election, TTL.toSeconds());
        long launched = System.currentTimeMillis();
        for (int i = 1; i <= 4; i++) {
            start("node-" + i);
        }
        Assignment assignment = awaitBalanced("four instances split the partitions");
        measured.put(
                "four instances started",
                "balanced "
                        + (System.currentTimeMillis() - launched)
                        + " ms after launching the JVMs");
        assignment.print(live);
        printing = true;

        chapter("4a. A fifth instance joins: node-5");
        long joining = System.currentTimeMillis();
        start("node-5");
        Assignment joined = awaitBalanced("the partitions are spread over five");
        Map<Integer, String> moves = moves(assignment, joined);
        check(
                moves.values().stream().allMatch("node-5"::equals),
                "on the join, partitions moved only to the newcomer: " + moves);
        measured.put(
                "join",
                moves.size()
                        + " partitions handed over to node-5 within "
                        + handOverTime(moves, joining)
                        + " ms (first hand-over to last assignment)");
        joined.print(live);

        chapter("4b. Graceful leave: SIGTERM to node-2");
        Assignment before = joined;
        long stopping = System.currentTimeMillis();
        instances.node("node-2").stop();
        live.remove("node-2");
        Assignment left = awaitBalanced("node-2's partitions are taken over");
        Map<Integer, String> leaveMoves = moves(before, left);
        checkOnlyFrom(leaveMoves, before, "node-2");
        for (int p : leaveMoves.keySet()) {
            check(
                    instances.events().stream()
                            .anyMatch(
                                    e ->
                                            e.node().equals("node-2")
                                                    && e.kind().equals("revoked")
                                                    && e.number("partition") == p
                                                    && e.detail("reason").equals("shutdown")),
                    "node-2 handed partition " + p + " over on shutdown");
        }
        measured.put(
                "graceful leave",
                leaveMoves.size()
                        + " partitions taken over "
                        + (lastAssigned(leaveMoves, stopping) - stopping)
                        + " ms after SIGTERM");
        left.print(live);

        chapter("4c. Crash: SIGKILL to node-3");
        before = left;
        long killed = System.currentTimeMillis();
        instances.node("node-3").kill();
        live.remove("node-3");
        say(
                "node-3's leases and its membership entry have to lapse (TTL %d ms) before its"
                        + " partitions move",
                TTL.toMillis());
        Assignment crashed = awaitBalanced("node-3's partitions are taken over");
        Map<Integer, String> crashMoves = moves(before, crashed);
        checkOnlyFrom(crashMoves, before, "node-3");
        measured.put(
                "crash",
                crashMoves.size()
                        + " partitions taken over "
                        + (lastAssigned(crashMoves, killed) - killed)
                        + " ms after SIGKILL");
        crashed.print(live);

        chapter("4. Summary");
        measured.put(
                "the chapter",
                "took "
                        + (System.currentTimeMillis() - launched) / 1000
                        + " s, JVM starts included");
        return summarize();
    }

    private void start(String id) throws IOException {
        live.add(id);
        instances.start(
                id,
                List.of(
                        "--redlease.name=" + mainName,
                        "--redlease.ttl=" + TTL.toMillis() + "ms",
                        "--redlease.partitions.tenants.count=" + PARTITIONS,
                        "--redlease.partitions.tenants.balance-interval=200ms",
                        "--redlease.partitions.tenants.settle=400ms",
                        "--sample.sync.interval=250ms"));
    }

    private String describe(Event event) {
        String partition = "p" + event.detail("partition");
        String token = "token " + event.detail("token");
        return switch (event.kind()) {
            case "assigned" -> printing ? "★ " + partition + ", " + token : null;
            case "revoked" ->
                    printing
                            ? (event.detail("reason").equals("shutdown")
                                            ? "  handed " + partition + " over"
                                            : "  lost "
                                                    + partition
                                                    + " ("
                                                    + event.detail("reason")
                                                    + ")")
                                    + ", "
                                    + token
                            : null;
            case "rejected" ->
                    "✗ sync of " + partition + " with " + token + " REJECTED by the fence";
            default -> null;
        };
    }

    // The assignment.

    private Assignment read() throws IOException {
        return Assignment.read(redis, election, PARTITIONS);
    }

    /**
     * The partitions each live instance holds by its own events (assigned, not yet revoked), with
     * their tokens. Events of one partition arrive in order from its instance.
     */
    private Map<String, Map<Integer, Long>> claimed() {
        Map<String, Map<Integer, Long>> claims = new HashMap<>();
        for (Event e : instances.events()) {
            Map<Integer, Long> owned = claims.computeIfAbsent(e.node(), n -> new HashMap<>());
            if (e.kind().equals("assigned")) {
                owned.put((int) e.number("partition"), e.number("token"));
            } else if (e.kind().equals("revoked")) {
                owned.remove((int) e.number("partition"), e.number("token"));
            }
        }
        claims.keySet().retainAll(live);
        return claims;
    }

    /** Whether the events show a sync of the partition by its holder in its current term. */
    private boolean synced(int partition, Assignment.Holder holder) {
        return instances.events().stream()
                .anyMatch(
                        e ->
                                e.kind().equals("synced")
                                        && e.node().equals(holder.node())
                                        && e.number("partition") == partition
                                        && e.number("token") == holder.token());
    }

    /**
     * Waits until Redis shows every partition held by a live instance, shares within one of each
     * other, each instance's own events claim exactly what Redis says it holds, and every owner has
     * synced its partitions in its current term.
     */
    private Assignment awaitBalanced(String what) throws Exception {
        long deadline = System.currentTimeMillis() + BALANCE_WAIT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            Assignment assignment = read();
            if (balanced(assignment)) {
                return assignment;
            }
            Thread.sleep(100);
        }
        read().print(live);
        throw new DemoFailure("timed out waiting until " + what);
    }

    private boolean balanced(Assignment assignment) {
        if (!assignment.isBalancedOver(live)) {
            return false;
        }
        Map<String, Map<Integer, Long>> claims = claimed();
        for (String node : live) {
            if (!assignment.heldBy(node).equals(claims.getOrDefault(node, Map.of()))) {
                return false;
            }
        }
        return assignment.holders().entrySet().stream()
                .allMatch(e -> synced(e.getKey(), e.getValue()));
    }

    /**
     * Returns the partitions whose holder changed, with their new holder, and prints them; checks
     * that each move came with a newer token.
     */
    private Map<Integer, String> moves(Assignment before, Assignment after) {
        Map<Integer, String> moved = new TreeMap<>();
        List<String> shown = new ArrayList<>();
        List<String> renewed = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            Assignment.Holder was = before.holder(p);
            Assignment.Holder now = after.holder(p);
            if (!was.node().equals(now.node())) {
                moved.put(p, now.node());
                shown.add(
                        "p%d %s→%s (token %d→%d)"
                                .formatted(p, was.node(), now.node(), was.token(), now.token()));
                check(
                        now.token() > was.token(),
                        "partition "
                                + p
                                + " moved with a newer token: "
                                + shown.get(shown.size() - 1));
            } else if (now.token() != was.token()) {
                renewed.add("p%d (token %d→%d)".formatted(p, was.token(), now.token()));
            }
        }
        say("Moved %d: %s", moved.size(), String.join(", ", shown));
        if (!renewed.isEmpty()) {
            say("Stayed on their holder in a new term: %s", String.join(", ", renewed));
        }
        return moved;
    }

    private void checkOnlyFrom(Map<Integer, String> moves, Assignment before, String leaver) {
        Set<Integer> leavers = before.heldBy(leaver).keySet();
        check(
                moves.keySet().equals(leavers),
                "only " + leaver + "'s partitions " + leavers + " moved: " + moves.keySet());
    }

    /** Returns the time of the last assignment of a moved partition after the given time. */
    private long lastAssigned(Map<Integer, String> moves, long since) {
        return instances.events().stream()
                .filter(e -> e.kind().equals("assigned") && e.time() >= since)
                .filter(e -> moves.containsKey((int) e.number("partition")))
                .mapToLong(Event::time)
                .max()
                .orElse(since);
    }

    /** Returns the time from the first hand-over of a moved partition to its last assignment. */
    private long handOverTime(Map<Integer, String> moves, long since) {
        long first =
                instances.events().stream()
                        .filter(e -> e.kind().equals("revoked") && e.time() >= since)
                        .filter(e -> moves.containsKey((int) e.number("partition")))
                        .mapToLong(Event::time)
                        .min()
                        .orElse(since);
        return lastAssigned(moves, since) - first;
    }

    // Checking.

    private int summarize() throws IOException {
        measured.forEach((step, result) -> System.out.printf("  %-24s %s%n", step + ":", result));
        long rejected =
                instances.events().stream().filter(e -> e.kind().equals("rejected")).count();
        System.out.printf("  Syncs rejected by the fence: %d%n", rejected);
        check(rejected == 0, "no fenced write was refused (" + rejected + " were)");
        Assignment holders = read();
        int terms = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            // Each partition's list of terms that synced, in the order Redis applied them.
            List<String> entries = redis.lrange(Assignment.tag(election, p) + ":terms");
            terms += entries.size();
            long last = 0;
            for (String entry : entries) {
                long token = Long.parseLong(entry.split(":")[0]);
                check(token > last, "partition " + p + "'s synced terms have increasing tokens");
                last = token;
            }
            Assignment.Holder holder = holders.holder(p);
            check(
                    holder != null
                            && !entries.isEmpty()
                            && entries.get(entries.size() - 1)
                                    .equals(holder.token() + ":" + holder.node()),
                    "partition " + p + "'s last synced term is its holder's");
        }
        System.out.printf(
                "  Terms that synced (in Redis): %d over %d partitions%n", terms, PARTITIONS);
        return selfCheck.report(
                "after every step each partition had exactly one owner and the shares were at most"
                        + " one apart; each move came with a newer token and only the leaver's"
                        + " partitions moved; no fenced write was refused.");
    }

    private void check(boolean condition, String claim) {
        selfCheck.check(condition, claim);
    }

    /** Kills the instances and deletes the chapter's keys. */
    synchronized void cleanUp() {
        instances.killAll();
        List<String> keys = new ArrayList<>();
        keys.add("{" + election + "}:members");
        for (int p = 0; p < PARTITIONS; p++) {
            String tag = Assignment.tag(election, p);
            for (String suffix :
                    List.of(":leader", ":fence", ":fence:applied", ":sync", ":terms")) {
                keys.add(tag + suffix);
            }
        }
        try {
            redis.delete(keys.toArray(String[]::new));
        } catch (IOException | RuntimeException ex) {
            // Redis may already be gone.
        }
    }
}
