package io.redlease.boot.app;

import static io.redlease.test.AppNodes.after;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A rolling deploy of three "old" (1.0.0) and three "new" (1.1.0) instances, each in its own JVM,
 * preferring the newest build: leadership moves exactly once, to a new instance, by a graceful
 * hand-off; when the new leader then crashes, leadership stays with the new build although an old
 * instance is still running.
 */
@ExtendWith(RedisExtension.class)
class RollingDeployTests {

    private static final Duration WAIT = Duration.ofSeconds(90);

    private static final Duration TTL = Duration.ofSeconds(1);

    private RedisServer server;

    private String name;

    private AppNodes nodes;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "rolling-" + System.nanoTime();
        this.nodes =
                new AppNodes(
                        RollingNodeApplication.class,
                        this::arguments,
                        Path.of("target", "rolling-deploy-events.txt"));
    }

    @AfterEach
    void tearDown() throws Exception {
        nodes.close();
    }

    private List<String> arguments(String id) {
        return List.of(
                "--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off",
                "--spring.main.keep-alive=true",
                "--spring.data.redis.host=" + server.host(),
                "--spring.data.redis.port=" + server.port(),
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=" + TTL.toMillis() + "ms",
                "--redlease.renew-interval=150ms",
                "--redlease.acquire-interval=200ms",
                "--redlease.preference.version=" + (id.startsWith("old") ? "1.0.0" : "1.1.0"),
                "--spring.lifecycle.timeout-per-shutdown-phase=5s",
                "--logging.level.root=WARN");
    }

    private Event awaitEvent(Predicate<Event> condition) {
        return nodes.await(condition, WAIT);
    }

    private void startReady(String id) {
        nodes.start(id);
        awaitEvent(event -> event.node().equals(id) && event.kind().equals("ready"));
    }

    /**
     * Waits until the node's candidacy is in Redis as ready: it counts for preference only once a
     * heartbeat after its readiness has reached Redis (a cold JVM's first calls may time out).
     */
    private void awaitReadyCandidate(String id) {
        await().atMost(WAIT)
                .until(
                        () ->
                                server.command("HGET", name + ":candidates", id)
                                                instanceof String entry
                                        && entry.contains("|1|"));
    }

    private void stop(String id) throws Exception {
        nodes.signal(id, "TERM");
        await().atMost(WAIT).until(() -> !nodes.isAlive(id));
    }

    private List<Event> elections(long since) {
        return nodes.events().stream().filter(after(since, "elected")).toList();
    }

    @Test
    void leadershipMovesOnceToTheNewBuildAndStaysThereThroughACrash() throws Exception {
        for (String id : List.of("old1", "old2", "old3")) {
            startReady(id);
        }
        Event first = awaitEvent(event -> event.kind().equals("elected"));
        assertThat(first.node()).startsWith("old");
        long deployStart = System.currentTimeMillis();

        // new1 comes up: the old leader hands over to it once it is ready.
        startReady("new1");
        Event handedTo = awaitEvent(after(deployStart, "elected"));
        assertThat(handedTo.node()).isEqualTo("new1");
        Event handedFrom =
                nodes.events().stream()
                        .filter(after(deployStart, "revoked"))
                        .findFirst()
                        .orElseThrow();
        assertThat(handedFrom.node()).isEqualTo(first.node());
        assertThat(handedFrom.details()).containsEntry("reason", "resigned");
        long gap = handedTo.time() - handedFrom.time();

        // The rest of the deploy: old instances go one by one, new ones come; nothing moves.
        stop("old1");
        startReady("new2");
        stop("old2");
        assertThat(elections(deployStart)).extracting(Event::node).containsExactly("new1");

        // The new leader crashes while old3 still runs: another new instance takes over.
        awaitReadyCandidate("new2");
        long crash = System.currentTimeMillis();
        nodes.signal("new1", "KILL");
        Event afterCrash = awaitEvent(after(crash, "elected"));
        assertThat(afterCrash.node()).isEqualTo("new2");
        long crashGap = afterCrash.time() - crash;

        startReady("new3");
        stop("old3");
        assertThat(elections(deployStart)).extracting(Event::node).containsExactly("new1", "new2");
        assertThat(gap)
                .as("lease-free gap of the graceful hand-off, ms")
                .isLessThan(TTL.toMillis());
        System.out.printf(
                "rolling deploy: hand-off %s -> new1 left the lease free %d ms; after new1 crashed,"
                        + " new2 led %d ms later (TTL %d ms)%n",
                first.node(), gap, crashGap, TTL.toMillis());
    }
}
