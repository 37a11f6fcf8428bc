package io.redlease.samples.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The redlease demo: three instances of the scheduled-job sample contend for one election on a real
 * Redis; the demo hands leadership over gracefully, kills a leader, freezes one past its lease and
 * shows the fence refusing its late write, then checks its own story.
 *
 * <p>Every timeline line comes from the instances' own event log or from Redis. Usage: {@code Demo
 * --jar <scheduled-job.jar> [--fresh-redis]}; {@code REDIS_URL} picks the Redis to use.
 */
public final class Demo {

    private static final Duration TTL = Duration.ofSeconds(2);

    private static final Duration WAIT = Duration.ofSeconds(90);

    private final Path jar;

    private final boolean freshRedis;

    private final long start = System.currentTimeMillis();

    private final String election = "{demo-" + UUID.randomUUID().toString().substring(0, 8) + "}";

    private final List<Event> events = new CopyOnWriteArrayList<>();

    private final Map<String, Node> nodes = new LinkedHashMap<>();

    private final List<Process> helpers = new ArrayList<>();

    private final List<String> failures = new ArrayList<>();

    private final Map<String, Long> measured = new LinkedHashMap<>();

    /** The report slot that came due during the crash, caught up by the successor. */
    private long caughtUpSlot;

    /** The slot report's period: the sample's cron {@code *}{@code /5 * * * * *}. */
    private static final long SLOT_MILLIS = 5000;

    private Redis redis;

    private Demo(Path jar, boolean freshRedis) {
        this.jar = jar;
        this.freshRedis = freshRedis;
    }

    public static void main(String[] args) throws Exception {
        Path jar = null;
        boolean fresh = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--jar" -> jar = Path.of(args[++i]);
                case "--fresh-redis" -> fresh = true;
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        if (jar == null || !Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("--jar must name the scheduled-job sample's jar");
        }
        Demo demo = new Demo(jar, fresh);
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
        redis = findRedis();
        say("Election %s, lease TTL %ss, on %s", election, TTL.toSeconds(), redis.description);
        say("Starting node-1, node-2 and node-3 (each a copy of samples/scheduled-job)...");
        for (int i = 1; i <= 3; i++) {
            startNode("node-" + i);
        }

        Event first = await("a leader is elected", e -> e.kind.equals("elected"), 0);
        awaitPublished(first.node, 2);

        chapter("1. Graceful hand-off: stopping the leader, " + first.node);
        long stopping = System.currentTimeMillis();
        nodes.get(first.node).stop();
        Event second = await("a successor is elected", isElectedOtherThan(first.node), stopping);
        long handOff = second.time - stopping;
        measured.put("graceful hand-off", handOff);
        say(
                "%s took over %d ms after %s began to stop (the release is announced, so nobody waits for the lease to lapse)",
                second.node, handOff, first.node);
        await(
                "it has stepped down",
                e -> e.node.equals(first.node) && e.kind.equals("stepped-down"),
                stopping);
        say("Restarting %s; it rejoins as a follower.", first.node);
        startNode(first.node);
        awaitPublished(second.node, 2);

        chapter(
                "2. Crash across a slot boundary: SIGKILL to the leader, "
                        + second.node
                        + ", just before a report slot");
        long slotAt = nextSlotBoundary(System.currentTimeMillis() + 1500);
        // The fault's timing, not synchronisation: kill one second before the slot, so the slot
        // comes due while the lease lapses and no instance leads.
        Thread.sleep(Math.max(0, slotAt - 1000 - System.currentTimeMillis()));
        long killed = System.currentTimeMillis();
        nodes.get(second.node).kill();
        Event third = await("a successor is elected", isElectedOtherThan(second.node), killed);
        long crash = third.time - killed;
        measured.put("crash failover", crash);
        say(
                "%s took over %d ms after the kill (its lease had to lapse: TTL %d ms)",
                third.node, crash, TTL.toMillis());
        Event caughtUp =
                await(
                        "the successor catches up the slot " + clock(slotAt),
                        e ->
                                e.kind.equals("slot-caught-up")
                                        && e.node.equals(third.node)
                                        && Long.parseLong(e.detail("slot")) == slotAt,
                        killed);
        caughtUpSlot = slotAt;
        say(
                "The %s report came due while nobody led; %s ran it %d ms late, right after its"
                        + " election, and no instance runs it again.",
                clock(slotAt), third.node, caughtUp.time - slotAt);
        awaitPublished(third.node, 1);

        chapter("3. Freeze: SIGSTOP to the leader " + third.node + " while it builds a report");
        Event building =
                await(
                        "it starts building a report",
                        e -> e.node.equals(third.node) && e.kind.equals("building"),
                        System.currentTimeMillis());
        Node frozen = nodes.get(third.node);
        frozen.signal("STOP");
        long frozenAt = System.currentTimeMillis();
        say(
                "%s frozen mid-report (term token %s); its lease runs out while it cannot act",
                third.node, building.detail("token"));
        Event fourth = await("a successor is elected", isElectedOtherThan(third.node), frozenAt);
        measured.put("failover after a freeze", fourth.time - frozenAt);
        awaitPublished(fourth.node, 1);
        say(
                "Resuming %s (SIGCONT): it still believes it leads and finishes its report...",
                third.node);
        long resumed = System.currentTimeMillis();
        frozen.signal("CONT");
        Event rejected =
                await(
                        "its late write is refused",
                        e -> e.node.equals(third.node) && e.kind.equals("rejected"),
                        resumed);
        await(
                "it steps down",
                e -> e.node.equals(third.node) && e.kind.equals("stepped-down"),
                resumed);
        awaitPublished(fourth.node, 2);
        say(
                "The fence refused token %s: the report numbers stay in order.",
                rejected.detail("token"));

        chapter("Summary");
        return summarize();
    }

    // Redis.

    private Redis findRedis() throws Exception {
        String url = System.getenv("REDIS_URL");
        if (url != null && !url.isBlank()) {
            return Redis.connect(URI.create(url), "REDIS_URL " + url, false);
        }
        if (!freshRedis) {
            Optional<Redis> local =
                    Redis.tryConnect("127.0.0.1", 6379, "127.0.0.1:6379 (already running)");
            if (local.isPresent()) {
                return local.get();
            }
        }
        int port = freePort();
        if (onPath("redis-server")) {
            Path dir = Files.createTempDirectory("redlease-demo-redis");
            Process server =
                    new ProcessBuilder(
                                    "redis-server",
                                    "--port",
                                    Integer.toString(port),
                                    "--bind",
                                    "127.0.0.1",
                                    "--save",
                                    "",
                                    "--appendonly",
                                    "no",
                                    "--dir",
                                    dir.toString())
                            .redirectErrorStream(true)
                            .redirectOutput(dir.resolve("redis.log").toFile())
                            .start();
            helpers.add(server);
            return awaitRedis(port, "a throwaway redis-server on port " + port);
        }
        if (onPath("docker")) {
            Process run =
                    new ProcessBuilder(
                                    "docker",
                                    "run",
                                    "--rm",
                                    "-d",
                                    "--name",
                                    "redlease-demo-" + port,
                                    "-p",
                                    "127.0.0.1:" + port + ":6379",
                                    "redis:7")
                            .redirectErrorStream(true)
                            .start();
            if (run.waitFor() == 0) {
                Runtime.getRuntime()
                        .addShutdownHook(
                                new Thread(
                                        () ->
                                                quietly(
                                                        "docker",
                                                        "rm",
                                                        "-f",
                                                        "redlease-demo-" + port)));
                return awaitRedis(port, "a throwaway redis:7 container on port " + port);
            }
        }
        throw new DemoFailure(
                "no Redis found: set REDIS_URL, start Redis on 127.0.0.1:6379, or install redis-server"
                        + " (Debian/Ubuntu: apt-get install redis-server) or Docker");
    }

    private static Redis awaitRedis(int port, String description) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            Optional<Redis> redis = Redis.tryConnect("127.0.0.1", port, description);
            if (redis.isPresent()) {
                return redis.get();
            }
            Thread.sleep(100);
        }
        throw new DemoFailure("Redis did not start on port " + port);
    }

    // Nodes.

    private void startNode(String id) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-jar");
        command.add(jar.toString());
        command.add("--spring.main.web-application-type=none");
        command.add("--spring.main.banner-mode=off");
        command.add("--spring.data.redis.url=" + redis.url);
        command.add("--redlease.name=" + election);
        command.add("--redlease.instance-id=" + id);
        command.add("--redlease.ttl=" + TTL.toMillis() + "ms");
        command.add("--logging.level.root=WARN");
        command.add("--logging.level.io.redlease.samples.demo=INFO");
        command.add("--logging.pattern.console=%level %m%n");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Node node = new Node(id, process);
        nodes.put(id, node);
        Thread reader = new Thread(() -> read(node), "demo-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Node node) {
        try (BufferedReader lines =
                new BufferedReader(
                        new InputStreamReader(
                                node.process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                int at = line.indexOf("DEMO|");
                if (at >= 0) {
                    Event event = Event.parse(line.substring(at));
                    if (event != null) {
                        events.add(event);
                        print(event);
                    }
                } else if (line.startsWith("ERROR")) {
                    System.out.println("          " + node.id + " | " + line);
                }
            }
        } catch (IOException ex) {
            // The process ended.
        }
    }

    private synchronized void print(Event event) {
        String text =
                switch (event.kind) {
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
                    case "slot-missed" ->
                            "! dropped " + event.detail("count") + " missed report slot(s)";
                    case "rejected" ->
                            "✗ write with token "
                                    + event.detail("token")
                                    + " REJECTED by the fence";
                    default -> null;
                };
        if (text != null) {
            System.out.printf(
                    "  %6.1fs  %-7s %s%n", (event.time - start) / 1000.0, event.node, text);
        }
    }

    // Waiting and checking.

    private Event await(String what, Predicate<Event> condition, long since)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (Event event : events) {
                if (event.time >= since && condition.test(event)) {
                    return event;
                }
            }
            Thread.sleep(20);
        }
        throw new DemoFailure("timed out waiting until " + what);
    }

    private static Predicate<Event> isElectedOtherThan(String node) {
        return event -> event.kind.equals("elected") && !event.node.equals(node);
    }

    private void awaitPublished(String node, int count) throws InterruptedException {
        long since = System.currentTimeMillis();
        for (int i = 0; i < count; i++) {
            long after = i == 0 ? since : lastPublishedBy(node);
            await(
                    node + " publishes a report",
                    e -> e.node.equals(node) && e.kind.equals("published") && e.time > after,
                    after);
        }
    }

    private long lastPublishedBy(String node) {
        return events.stream()
                .filter(e -> e.node.equals(node) && e.kind.equals("published"))
                .mapToLong(e -> e.time)
                .max()
                .orElse(0);
    }

    /** Returns the first slot boundary at or after a time. */
    private static long nextSlotBoundary(long millis) {
        return (millis + SLOT_MILLIS - 1) / SLOT_MILLIS * SLOT_MILLIS;
    }

    private static String clock(long millis) {
        return java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss")
                .format(
                        java.time.LocalTime.ofInstant(
                                java.time.Instant.ofEpochMilli(millis),
                                java.time.ZoneId.systemDefault()));
    }

    private int summarize() throws IOException {
        List<Event> elections =
                events.stream()
                        .filter(e -> e.kind.equals("elected"))
                        .sorted((a, b) -> Long.compare(a.time, b.time))
                        .toList();
        List<String> published = redis.lrange(election + ":reports");
        long rejected = events.stream().filter(e -> e.kind.equals("rejected")).count();

        System.out.println("  Terms:");
        for (Event e : elections) {
            System.out.printf(
                    "    token %-4s %s at +%.1fs%n",
                    e.detail("token"), e.node, (e.time - start) / 1000.0);
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
        for (Event rejection : events.stream().filter(e -> e.kind.equals("rejected")).toList()) {
            long token = Long.parseLong(rejection.detail("token"));
            check(
                    elections.stream()
                            .anyMatch(
                                    e ->
                                            e.time <= rejection.time
                                                    && Long.parseLong(e.detail("token")) > token),
                    "a newer term existed when token " + token + " was refused");
        }
        System.out.println();
        if (failures.isEmpty()) {
            System.out.println(
                    "Self-check PASSED: tokens strictly increased, every applied report kept its order, the stale write was refused, and every report slot was reported once.");
            return 0;
        }
        failures.forEach(failure -> System.out.println("Self-check FAILED: " + failure));
        return 1;
    }

    private void check(boolean condition, String claim) {
        if (!condition) {
            failures.add(claim);
        }
    }

    // Output and cleanup.

    private static void say(String format, Object... args) {
        System.out.println("==> " + String.format(format, args));
    }

    private static void chapter(String title) {
        System.out.println();
        System.out.println("── " + title + " ──");
    }

    private synchronized void cleanUp() {
        for (Node node : nodes.values()) {
            node.signal("CONT");
            node.process.destroyForcibly();
        }
        nodes.clear();
        if (redis != null) {
            try {
                redis.delete(
                        election + ":leader",
                        election + ":fence",
                        election + ":fence:applied",
                        election + ":report-number",
                        election + ":reports",
                        election + ":slot-reports",
                        election + ":slots:slotReport.report");
            } catch (IOException | RuntimeException ex) {
                // Redis may already be gone.
            }
            redis.close();
            redis = null;
        }
        helpers.forEach(Process::destroyForcibly);
        helpers.clear();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static boolean onPath(String command) {
        for (String dir :
                System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    private static void quietly(String... command) {
        try {
            new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .start()
                    .waitFor(10, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException ex) {
            // Best effort.
        }
    }

    /** One instance of the sample. */
    private static final class Node {

        final String id;

        final Process process;

        Node(String id, Process process) {
            this.id = id;
            this.process = process;
        }

        /**
         * Asks the instance to shut down gracefully (SIGTERM), as an orchestrator would. Sent with
         * kill rather than Process.destroy(), which would also close our end of its output.
         */
        void stop() {
            signal("TERM");
        }

        void kill() {
            process.destroyForcibly();
        }

        void signal(String signal) {
            if (process.isAlive()) {
                quietly("kill", "-" + signal, Long.toString(process.pid()));
            }
        }
    }

    /** One line of an instance's event log: {@code DEMO|<epoch ms>|<node>|<kind>|k=v k=v}. */
    private record Event(long time, String node, String kind, Map<String, String> details) {

        static Event parse(String line) {
            String[] parts = line.split("\\|", -1);
            if (parts.length < 5) {
                return null;
            }
            Map<String, String> details = new LinkedHashMap<>();
            for (String pair : parts[4].trim().split(" ")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    details.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            return new Event(Long.parseLong(parts[1]), parts[2], parts[3], details);
        }

        String detail(String key) {
            return details.getOrDefault(key, "?");
        }
    }

    /** The demo could not tell its story. */
    private static final class DemoFailure extends RuntimeException {

        private static final long serialVersionUID = 1L;

        DemoFailure(String message) {
            super(message);
        }
    }
}
