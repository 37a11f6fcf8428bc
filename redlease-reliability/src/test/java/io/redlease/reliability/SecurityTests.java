package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elector;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisNode;
import io.redlease.test.RedisServer;
import io.redlease.test.TlsCertificates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Redis with a password, with a least-privilege ACL user, and over TLS; the exact ACL rules
 * redlease needs are {@link #RULES}, and each one is shown to be needed.
 */
@ExtendWith(RedisExtension.class)
class SecurityTests {

    private static final String PASSWORD = "s3cret-for-tests";

    /**
     * The least privileges an elector and its fenced writes need, for an election named {@code
     * <name>} (each rule after the first two is removed in turn by {@link #eachAclRuleIsNeeded}).
     * {@code +rpush} is this suite's fenced write; a real application adds the commands its own
     * fenced bodies run ({@code +set} and {@code +hset} for the built-in {@code Fencer.set}/{@code
     * hset}), and key patterns for its fenced keys.
     */
    static List<String> rules(String name) {
        return List.of(
                "resetkeys",
                "resetchannels",
                "+evalsha",
                "+eval",
                "+get",
                "+set",
                "+incr",
                "+pexpire",
                "+pttl",
                "+del",
                "+publish",
                "+subscribe",
                "+unsubscribe",
                "+ping",
                "+rpush",
                "~" + name + ":*",
                "&" + name + ":released");
    }

    @Test
    void worksWithRequirePassAndFailsClearlyWithoutIt(
            @Dedicated(requirePass = PASSWORD) RedisServer server, TestInfo info) throws Exception {
        try (Connections connections = new Connections();
                Harness harness =
                        new Harness(
                                info,
                                () ->
                                        connections.standalone(
                                                server.host(), server.port(), null, PASSWORD))) {
            harness.candidate("a", Workload.steady(Duration.ofMillis(2)));
            harness.awaitWritingLeader(3);
            try (Connections noPassword = new Connections()) {
                Elector intruder =
                        new Elector(
                                noPassword.standalone(server.host(), server.port()),
                                harness.config()
                                        .instanceId("intruder")
                                        .observer(new Observer(harness.history, "intruder"))
                                        .build());
                intruder.start();
                Awaitility.await()
                        .atMost(scaled(Duration.ofSeconds(5)))
                        .until(
                                () ->
                                        harness.history.failures().stream()
                                                .anyMatch(f -> f.candidate().equals("intruder")));
                intruder.stop();
            }
            assertThat(harness.history.failures())
                    .filteredOn(f -> f.candidate().equals("intruder"))
                    .allMatch(
                            f ->
                                    f.error().contains("NOAUTH")
                                            || f.error().toLowerCase().contains("auth"));
            Harness.assertSafe(harness.check());
        }
    }

    @Test
    void worksWithALeastPrivilegeAclUser(@Dedicated RedisServer server, TestInfo info)
            throws Exception {
        try (Connections connections = new Connections();
                Harness harness =
                        new Harness(
                                info,
                                () ->
                                        connections.standalone(
                                                server.host(), server.port(), "redlease", PASSWORD),
                                connections.standalone(server.host(), server.port()))) {
            acl(server, "redlease", rules(harness.name));
            harness.candidate("a", Workload.steady(Duration.ofMillis(2)));
            harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
            Candidate leader = harness.awaitWritingLeader(3);
            leader.close();
            Awaitility.await()
                    .atMost(scaled(Duration.ofSeconds(5)))
                    .until(() -> harness.other(leader).isLeader());
            assertThat(harness.history.failures()).isEmpty();
            Harness.assertSafe(harness.check());
            // Nothing was refused behind the elector's back either (a refused subscription or
            // connection setup command is swallowed by the client): Redis logs every denial.
            assertThat(deniedObjects(server, "redlease")).isEmpty();
        }
    }

    @Test
    void eachAclRuleIsNeeded(@Dedicated RedisServer server, TestInfo info) throws Exception {
        List<String> findings = new ArrayList<>();
        String probe = "{acl-probe}";
        List<String> all = rules(probe);
        // The first two rules only reset; every other one is removed in turn.
        for (int i = 2; i < all.size(); i++) {
            String removed = all.get(i);
            List<String> fewer = new ArrayList<>(all);
            fewer.remove(i);
            String user = "rl" + i;
            acl(server, user, fewer);
            server.command("DEL", probe + ":leader");
            History history = new History();
            try (Connections connections = new Connections()) {
                List<Candidate> candidates = new ArrayList<>();
                for (String id : List.of("c" + i, "d" + i)) {
                    Candidate candidate =
                            new Candidate(
                                    id,
                                    connections.standalone(
                                            server.host(), server.port(), user, PASSWORD),
                                    null,
                                    io.redlease.core.ElectorConfig.builder(probe)
                                            .ttl(Duration.ofMillis(1000))
                                            .renewInterval(Duration.ofMillis(200))
                                            .acquireInterval(Duration.ofMillis(300)),
                                    history,
                                    new FencedLog(probe),
                                    Workload.steady(Duration.ofMillis(5)).writesPerTerm(2));
                    candidate.start();
                    candidates.add(candidate);
                }
                // Long enough for acquires by a leader and a follower, writes, a release, a
                // hand-over and the release subscriptions (made in the background), unless a
                // refusal shows up first.
                awaitQuietly(
                        scaled(Duration.ofSeconds(3)),
                        () -> refusal(history) != null || !deniedObjects(server, user).isEmpty());
                for (Candidate candidate : candidates) {
                    candidate.close();
                }
                // Stopping unsubscribes, in the background: give Redis a moment to log a refused
                // UNSUBSCRIBE while the connections are still open (closing them first would
                // drop the subscription without one).
                awaitQuietly(
                        scaled(Duration.ofSeconds(2)),
                        () -> refusal(history) != null || !deniedObjects(server, user).isEmpty());
            }
            String refusal = refusal(history);
            List<String> denied = deniedObjects(server, user);
            findings.add(
                    "without "
                            + removed
                            + ": "
                            + (refusal != null ? refusal : "")
                            + (denied.isEmpty() ? "" : " ACL LOG denied " + denied));
            // Outside a script Redis says NOPERM; inside one, "The user executing the script
            // can't run this command"; what the client swallows (the release subscription) is in
            // the ACL LOG.
            if (denied.isEmpty()) {
                assertThat(refusal)
                        .as("without " + removed + " (findings so far: " + findings + ")")
                        .isNotNull()
                        .containsAnyOf(
                                "NOPERM",
                                "can't run this command",
                                "can't publish",
                                "can't access");
            }
        }
        findings.forEach(f -> Figures.note("ACL: " + f));
        findings.forEach(f -> System.out.println("[redlease-reliability] ACL " + f));
    }

    /**
     * Commands the test itself sends between resetting the statistics and reading them, and those
     * Redis lets every user run (the connection handshake).
     */
    private static final Set<String> NOT_SENT_BY_THE_FEATURE =
            Set.of("acl|log", "pubsub|channels", "info", "config|resetstat", "hello", "auth");

    /**
     * Each feature runs under a user with exactly its documented rules ({@link FeatureAcl}): two
     * instances, a hand-off and a graceful stop, with nothing refused, {@code ACL LOG} empty, every
     * command the run sent ({@code INFO commandstats}, script calls included) among the rules, and
     * every command the feature adds to the election's actually sent.
     */
    @Test
    void eachFeatureWorksUnderItsDocumentedUserAndSendsNothingElse(@Dedicated RedisServer server) {
        List<String> findings = new ArrayList<>();
        for (FeatureAcl feature : FeatureAcl.values()) {
            String name = "acl-" + feature.name().toLowerCase(Locale.ROOT).replace('_', '-');
            String user = "u-" + name;
            List<String> rules = feature.rules(name);
            acl(server, user, rules);
            FeatureRunOutcome outcome = runFeature(server, feature, name, user);
            assertThat(outcome.problems()).as(feature + " under " + rules).isEmpty();
            assertThat(outcome.denied()).as("ACL LOG after " + feature).isEmpty();
            Set<String> allowed = new TreeSet<>(feature.commands(name));
            assertThat(outcome.sent())
                    .as("commands " + feature + " sent, beyond " + allowed)
                    .isSubsetOf(allowed);
            assertThat(outcome.sent())
                    .as("the commands " + feature + " adds, each sent by its run")
                    .containsAll(feature.ownCommands(name));
            findings.add(feature + " sent " + outcome.sent());
        }
        findings.forEach(f -> Figures.note("ACL: " + f));
        findings.forEach(f -> System.out.println("[redlease-reliability] ACL " + f));
        for (FeatureAcl feature : FeatureAcl.values()) {
            System.out.println(
                    "[redlease-reliability] ACL "
                            + feature.title()
                            + ": "
                            + feature.setUser("<name>"));
        }
    }

    /**
     * Each rule a feature adds to the election's is needed: without it, the feature's run meets
     * {@code NOPERM} (or Redis denies something the client swallows, in {@code ACL LOG}). The
     * election's own rules are shown needed by {@link #eachAclRuleIsNeeded}.
     */
    @Test
    void eachFeatureRuleIsNeeded(@Dedicated RedisServer server) {
        List<String> findings = new ArrayList<>();
        int users = 0;
        for (FeatureAcl feature : FeatureAcl.values()) {
            if (feature == FeatureAcl.ELECTION) {
                continue;
            }
            String name = "acl-need-" + feature.name().toLowerCase(Locale.ROOT).replace('_', '-');
            for (String removed : feature.own(name)) {
                List<String> fewer = new ArrayList<>(feature.rules(name));
                fewer.remove(removed);
                String user = "n" + users++;
                acl(server, user, fewer);
                server.command("DEL", name + ":leader", name + ":slots:job");
                FeatureRunOutcome outcome = runFeature(server, feature, name, user);
                String finding =
                        feature
                                + " without "
                                + removed
                                + ": "
                                + String.join("; ", outcome.problems())
                                + (outcome.denied().isEmpty()
                                        ? ""
                                        : " ACL LOG denied " + outcome.denied());
                findings.add(finding);
                if (outcome.denied().isEmpty()) {
                    assertThat(String.join("; ", outcome.problems()))
                            .as(finding)
                            .containsAnyOf(
                                    "NOPERM",
                                    "can't run this command",
                                    "can't publish",
                                    "can't access",
                                    "no permissions");
                }
            }
        }
        findings.forEach(f -> Figures.note("ACL: " + f));
        findings.forEach(f -> System.out.println("[redlease-reliability] ACL " + f));
    }

    /** What a feature's run met and sent. */
    private record FeatureRunOutcome(
            List<String> problems, List<String> denied, Set<String> sent) {}

    /**
     * Runs a feature as the user on a fresh script cache and fresh command statistics, waits until
     * its subscriptions are gone, and reads what it sent.
     */
    private static FeatureRunOutcome runFeature(
            RedisServer server, FeatureAcl feature, String name, String user) {
        server.command("SCRIPT", "FLUSH");
        server.command("CONFIG", "RESETSTAT");
        List<String> problems;
        try (Connections connections = new Connections();
                FeatureRun run =
                        new FeatureRun(
                                feature,
                                name,
                                () ->
                                        connections.standalone(
                                                server.host(), server.port(), user, PASSWORD),
                                () -> !deniedObjects(server, user).isEmpty())) {
            run.run();
            problems = new ArrayList<>(run.problems());
            // Stopping unsubscribes in the background: let the unsubscriptions reach Redis (or
            // be refused there) while the connections are still open.
            awaitQuietly(
                    scaled(Duration.ofSeconds(5)),
                    () -> subscribedChannels(server, name).isEmpty());
        }
        return new FeatureRunOutcome(problems, deniedObjects(server, user), commandsSent(server));
    }

    private static List<?> subscribedChannels(RedisServer server, String name) {
        Object reply = server.command("PUBSUB", "CHANNELS", "*" + name + "*");
        return reply instanceof List<?> list ? list : List.of();
    }

    /**
     * Returns the commands Redis ran since its statistics were reset ({@code INFO commandstats},
     * which counts the commands scripts call too), in lower case, subcommands as {@code
     * command|sub}, without those of {@link #NOT_SENT_BY_THE_FEATURE}.
     */
    static Set<String> commandsSent(RedisServer server) {
        Set<String> sent = new TreeSet<>();
        for (String line : server.info("commandstats").split("\\R")) {
            if (line.startsWith("cmdstat_")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                if (!NOT_SENT_BY_THE_FEATURE.contains(command)) {
                    sent.add(command);
                }
            }
        }
        return sent;
    }

    /** The first error from Redis in the history (not the elector's own timeout), or null. */
    /**
     * Waits until the condition holds or the time is up, without failing: the assertion that
     * follows names the rule under test.
     */
    private static void awaitQuietly(
            Duration atMost, java.util.concurrent.Callable<Boolean> condition) {
        try {
            Awaitility.await().atMost(atMost).until(condition);
        } catch (org.awaitility.core.ConditionTimeoutException ex) {
            // Judged by the assertion below.
        }
    }

    private static String refusal(History history) {
        return history.failures().stream()
                .map(History.Failure::error)
                .filter(e -> !e.contains("QueryTimeout"))
                .findFirst()
                .orElse(
                        history.writes().stream()
                                .map(History.Write::error)
                                .filter(e -> !e.isEmpty())
                                .findFirst()
                                .orElse(null));
    }

    /** Returns what {@code ACL LOG} says was denied to the user: commands, keys, channels. */
    static List<String> deniedObjects(RedisServer server, String user) {
        List<String> objects = new ArrayList<>();
        Object log = server.command("ACL", "LOG");
        if (log instanceof List<?> entries) {
            for (Object entry : entries) {
                if (entry instanceof List<?> fields
                        && fields.indexOf("username") >= 0
                        && user.equals(fields.get(fields.indexOf("username") + 1))) {
                    objects.add(
                            fields.get(fields.indexOf("reason") + 1)
                                    + " "
                                    + fields.get(fields.indexOf("object") + 1));
                }
            }
        }
        return objects;
    }

    @Test
    void worksOverTls(TestInfo info) throws Exception {
        try (TlsCertificates certs = TlsCertificates.generate()) {
            int tlsPort = RedisNode.freePort();
            try (RedisNode node =
                            RedisNode.start(
                                    certs.redisServerArgs(tlsPort, "--tls-auth-clients", "no"));
                    Connections connections = new Connections();
                    Harness harness =
                            new Harness(
                                    info,
                                    () ->
                                            connections.tls(
                                                    "127.0.0.1",
                                                    tlsPort,
                                                    certs.caCert().toFile()))) {
                harness.candidate("a", Workload.steady(Duration.ofMillis(2)));
                harness.candidate("b", Workload.steady(Duration.ofMillis(2)));
                harness.awaitWritingLeader(3);
                assertThat(Long.parseLong(node.info("stats", "total_connections_received")))
                        .isPositive();
                Harness.assertSafe(harness.check());
            }
        }
    }

    static void acl(RedisServer server, String user, List<String> rules) {
        List<String> command =
                new ArrayList<>(List.of("ACL", "SETUSER", user, "reset", "on", ">" + PASSWORD));
        command.addAll(rules);
        server.command(command.toArray(String[]::new));
    }

    /** Records an extra elector's callbacks in a harness history. */
    private static final class Observer implements io.redlease.core.Observer {
        private final History history;
        private final String id;

        Observer(History history, String id) {
            this.history = history;
            this.id = id;
        }

        @Override
        public void onError(Operation operation, Throwable error) {
            history.failed(id, operation.name(), Harness.describe(error), System.nanoTime());
        }
    }
}
