package io.redlease.samples.demo;

import static io.redlease.samples.demo.Console.chapter;
import static io.redlease.samples.demo.Console.clock;
import static io.redlease.samples.demo.Console.say;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * The redlease demo: three instances of the scheduled-job sample contend for one election on a real
 * Redis; the demo hands leadership over gracefully, kills a leader, freezes one past its lease and
 * shows the fence refusing its late write, then checks its own story. Its last chapter ({@link
 * PartitionDemo}) spreads the partitioned-job sample's partitions over instances that come and go.
 *
 * <p>Every timeline line comes from the instances' own event log or from Redis. Usage: {@code Demo
 * --jar <scheduled-job.jar> --partitioned-jar <partitioned-job.jar> [--fresh-redis]
 * [--partitions-only]}; {@code REDIS_URL} picks the Redis to use.
 */
public final class Demo {

    private static final Duration TTL = Duration.ofSeconds(2);

    private final Path jar;

    private final Path partitionedJar;

    private final boolean freshRedis;

    private final boolean partitionsOnly;

    private final long start = System.currentTimeMillis();

    private final String election = "{demo-" + UUID.randomUUID().toString().substring(0, 8) + "}";

    private Instances instances;

    private PartitionDemo partitions;

    private final List<Process> helpers = new ArrayList<>();

    private final SelfCheck selfCheck = new SelfCheck();

    private final Map<String, Long> measured = new LinkedHashMap<>();

    /** The report slot that came due during the crash, caught up by the successor. */
    private long caughtUpSlot;

    /** The slot report's period: the sample's cron {@code *}{@code /5 * * * * *}. */
    private static final long SLOT_MILLIS = 5000;

    private Redis redis;

    private Demo(Path jar, Path partitionedJar, boolean freshRedis, boolean partitionsOnly) {
        this.jar = jar;
        this.partitionedJar = partitionedJar;
        this.freshRedis = freshRedis;
        this.partitionsOnly = partitionsOnly;
    }

    public static void main(String[] args) throws Exception {
        Path jar = null;
        Path partitionedJar = null;
        boolean fresh = false;
        boolean partitionsOnly = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--jar" -> jar = Path.of(args[++i]);
                case "--partitioned-jar" -> partitionedJar = Path.of(args[++i]);
                case "--fresh-redis" -> fresh = true;
                case "--partitions-only" -> partitionsOnly = true;
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        if (jar == null || !Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("--jar must name the scheduled-job sample's jar");
        }
        if (partitionedJar == null || !Files.isRegularFile(partitionedJar)) {
            throw new IllegalArgumentException(
                    "--partitioned-jar must name the partitioned-job sample's jar");
        }
        Demo demo = new Demo(jar, partitionedJar, fresh, partitionsOnly);
        Thread cleanup = new Thread(demo::cleanUp, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        int status;
        try {
            status = demo.run();
        } catch (DemoFailure ex) {
            System.out.println();
            System.out.println("Demo stopped: " + ex.getMessage());
            status = 1;
        }
        demo.cleanUp();
        Runtime.getRuntime().removeShutdownHook(cleanup);
        System.exit(status);
    }

    private int run() throws Exception {
        redis = Redis.find(freshRedis, helpers);
        int status = partitionsOnly ? 0 : failovers();
        if (!partitionsOnly) {
            stopFailoverNodes();
        }
        partitions = new PartitionDemo(redis, partitionedJar, start);
        return partitions.run() == 0 ? status : 1;
    }

    /** Chapters 1 to 3: one election, a hand-off, a crash and a freeze. */
    private int failovers() throws Exception {
        instances = new Instances(jar, redis.url, start, Demo::describe);
        say("Election %s, lease TTL %ss, on %s", election, TTL.toSeconds(), redis.description);
        say("Starting node-1, node-2 and node-3 (each a copy of samples/scheduled-job)...");
        for (int i = 1; i <= 3; i++) {
            startNode("node-" + i);
        }

        Event first = instances.await("a leader is elected", e -> e.kind().equals("elected"), 0);
        awaitPublished(first.node(), 2);

        chapter("1. Graceful hand-off: stopping the leader, " + first.node());
        long stopping = System.currentTimeMillis();
        instances.node(first.node()).stop();
        Event second =
                instances.await(
                        "a successor is elected", isElectedOtherThan(first.node()), stopping);
        long handOff = second.time() - stopping;
        measured.put("graceful hand-off", handOff);
        say(
                "%s took over %d ms after %s began to stop (the release is announced, so nobody waits for the lease to lapse)",
                second.node(), handOff, first.node());
        instances.await(
                "it has stepped down",
                e -> e.node().equals(first.node()) && e.kind().equals("stepped-down"),
                stopping);
        say("Restarting %s; it rejoins as a follower.", first.node());
        startNode(first.node());
        awaitPublished(second.node(), 2);

        chapter(
                "2. Crash across a slot boundary: SIGKILL to the leader, "
                        + second.node()
                        + ", just before a report slot");
        long slotAt = nextSlotBoundary(System.currentTimeMillis() + 1500);
        // The fault's timing, not synchronisation: kill one second before the slot, so the slot
        // comes due while the lease lapses and no instance leads.
        Thread.sleep(Math.max(0, slotAt - 1000 - System.currentTimeMillis()));
        long killed = System.currentTimeMillis();
        instances.node(second.node()).kill();
        Event third =
                instances.await(
                        "a successor is elected", isElectedOtherThan(second.node()), killed);
        long crash = third.time() - killed;
        measured.put("crash failover", crash);
        say(
                "%s took over %d ms after the kill (its lease had to lapse: TTL %d ms)",
                third.node(), crash, TTL.toMillis());
        Event caughtUp =
                instances.await(
                        "the successor catches up the slot " + clock(slotAt),
                        e ->
                                e.kind().equals("slot-caught-up")
                                        && e.node().equals(third.node())
                                        && Long.parseLong(e.detail("slot")) == slotAt,
                        killed);
        caughtUpSlot = slotAt;
        say(
                "The %s report came due while nobody led; %s ran it %d ms late, right after its"
                        + " election, and no instance runs it again.",
                clock(slotAt), third.node(), caughtUp.time() - slotAt);
        awaitPublished(third.node(), 1);

        chapter("3. Freeze: SIGSTOP to the leader " + third.node() + " while it builds a report");
        Event building =
                instances.await(
                        "it starts building a report",
                        e -> e.node().equals(third.node()) && e.kind().equals("building"),
                        System.currentTimeMillis());
        Instances.Node frozen = instances.node(third.node());
        frozen.signal("STOP");
        long frozenAt = System.currentTimeMillis();
        say(
                "%s frozen mid-report (term token %s); its lease runs out while it cannot act",
                third.node(), building.detail("token"));
        Event fourth =
                instances.await(
                        "a successor is elected", isElectedOtherThan(third.node()), frozenAt);
        measured.put("failover after a freeze", fourth.time() - frozenAt);
        awaitPublished(fourth.node(), 1);
        say(
                "Resuming %s (SIGCONT): it still believes it leads and finishes its report...",
                third.node());
        long resumed = System.currentTimeMillis();
        frozen.signal("CONT");
        Event rejected =
                instances.await(
                        "its late write is refused",
                        e -> e.node().equals(third.node()) && e.kind().equals("rejected"),
                        resumed);
        instances.await(
                "it steps down",
                e -> e.node().equals(third.node()) && e.kind().equals("stepped-down"),
                resumed);
        awaitPublished(fourth.node(), 2);
        say(
                "The fence refused token %s: the report numbers stay in order.",
                rejected.detail("token"));

        chapter("Summary");
        return summarize();
    }

    // Nodes.

    private void startNode(String id) throws IOException {
        instances.start(
                id,
                List.of("--redlease.name=" + election, "--redlease.ttl=" + TTL.toMillis() + "ms"));
    }

    private static String describe(Event event) {
        return switch (event.kind()) {
            case "elected" -> "★ elected leader, token " + event.detail("token");
            case "stepped-down" -> "  stepped down (" + event.detail("reason") + ")";
            case "follower" -> "  following";
            case "published" ->
                    "  published report #"
                            + event.detail("report")
                            + " with token "
                            + event.detail("token");
            case "slot-start" ->
                    "  building the "
                            + clock(Long.parseLong(event.detail("slot")))
                            + " report"
                            + ("true".equals(event.detail("catchUp"))
                                    ? " (catching up: it came due while nobody led)"
                                    : "");
            case "slot-missed" -> "! dropped " + event.detail("count") + " missed report slot(s)";
            case "rejected" ->
                    "✗ write with token " + event.detail("token") + " REJECTED by the fence";
            default -> null;
        };
    }

    // Waiting and checking.

    private static Predicate<Event> isElectedOtherThan(String node) {
        return event -> event.kind().equals("elected") && !event.node().equals(node);
    }

    private void awaitPublished(String node, int count) throws InterruptedException {
        long since = System.currentTimeMillis();
        for (int i = 0; i < count; i++) {
            long after = i == 0 ? since : lastPublishedBy(node);
            instances.await(
                    node + " publishes a report",
                    e -> e.node().equals(node) && e.kind().equals("published") && e.time() > after,
                    after);
        }
    }

    private long lastPublishedBy(String node) {
        return instances.events().stream()
                .filter(e -> e.node().equals(node) && e.kind().equals("published"))
                .mapToLong(e -> e.time())
                .max()
                .orElse(0);
    }

    /** Returns the first slot boundary at or after a time. */
    private static long nextSlotBoundary(long millis) {
        return (millis + SLOT_MILLIS - 1) / SLOT_MILLIS * SLOT_MILLIS;
    }

    private int summarize() throws IOException {
        List<Event> elections =
                instances.events().stream()
                        .filter(e -> e.kind().equals("elected"))
                        .sorted((a, b) -> Long.compare(a.time(), b.time()))
                        .toList();
        List<String> published = redis.lrange(election + ":reports");
        long rejected =
                instances.events().stream().filter(e -> e.kind().equals("rejected")).count();

        System.out.println("  Terms:");
        for (Event e : elections) {
            System.out.printf(
                    "    token %-4s %s at +%.1fs%n",
                    e.detail("token"), e.node(), (e.time() - start) / 1000.0);
        }
        measured.forEach(
                (name, millis) -> System.out.printf("  %-24s %d ms%n", name + ":", millis));
        System.out.printf("  Writes applied (in Redis):  %d reports%n", published.size());
        System.out.printf("  Writes rejected (stale):    %d%n", rejected);

        long lastToken = 0;
        for (Event e : elections) {
            long token = Long.parseLong(e.detail("token"));
            check(token > lastToken, "tokens strictly increase: " + token + " after " + lastToken);
            lastToken = token;
        }
        long lastApplied = 0;
        for (int i = 0; i < published.size(); i++) {
            String[] parts = published.get(i).split(":");
            long token = Long.parseLong(parts[0]);
            check(
                    Long.parseLong(parts[2]) == i + 1,
                    "report numbers have no gap or repeat at #" + (i + 1));
            check(
                    token >= lastApplied,
                    "no applied write has an older token than one before it ("
                            + token
                            + " after "
                            + lastApplied
                            + ")");
            lastApplied = token;
        }
        check(rejected >= 1, "the frozen leader's late write was rejected");
        List<Long> slots =
                redis.lrange(election + ":slot-reports").stream()
                        .map(entry -> Long.parseLong(entry.split(":")[0]))
                        .toList();
        System.out.printf(
                "  Slot reports (in Redis):    %d, %s to %s%n",
                slots.size(),
                slots.isEmpty() ? "-" : clock(slots.get(0)),
                slots.isEmpty() ? "-" : clock(slots.get(slots.size() - 1)));
        check(slots.size() >= 3, "at least three slot reports were written");
        for (int i = 1; i < slots.size(); i++) {
            check(
                    slots.get(i) - slots.get(i - 1) == SLOT_MILLIS,
                    "one report per slot, none missed or doubled, at "
                            + clock(slots.get(i - 1))
                            + " -> "
                            + clock(slots.get(i)));
        }
        check(slots.contains(caughtUpSlot), "the slot that came due during the crash was reported");
        for (Event rejection :
                instances.events().stream().filter(e -> e.kind().equals("rejected")).toList()) {
            long token = Long.parseLong(rejection.detail("token"));
            check(
                    elections.stream()
                            .anyMatch(
                                    e ->
                                            e.time() <= rejection.time()
                                                    && Long.parseLong(e.detail("token")) > token),
                    "a newer term existed when token " + token + " was refused");
        }
        return selfCheck.report(
                "tokens strictly increased, every applied report kept its order, the stale write"
                        + " was refused, and every report slot was reported once.");
    }

    private void check(boolean condition, String claim) {
        selfCheck.check(condition, claim);
    }

    // Output and cleanup.

    private synchronized void cleanUp() {
        stopFailoverNodes();
        if (partitions != null) {
            partitions.cleanUp();
            partitions = null;
        }
        if (redis != null) {
            redis.close();
            redis = null;
        }
        helpers.forEach(Process::destroyForcibly);
        helpers.clear();
    }

    /** Kills the first chapters' instances and deletes their keys. */
    private synchronized void stopFailoverNodes() {
        if (instances != null) {
            instances.killAll();
            instances = null;
        }
        if (redis != null) {
            try {
                redis.delete(
                        election + ":leader",
                        election + ":fence",
                        election + ":fence:applied",
                        election + ":report-number",
                        election + ":reports",
                        election + ":slot-reports",
                        election + ":slot-reports:slots",
                        election + ":slots:slotReport.report");
            } catch (IOException | RuntimeException ex) {
                // Redis may already be gone.
            }
        }
    }
}
