package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.AppNodes;
import io.redlease.test.AppNodes.Event;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * No leader-only work starts past its term's local deadline: the leader's JVM is frozen with {@code
 * SIGSTOP} for longer than the TTL and then continued, several times. Its scheduler fires the runs
 * it missed at once, before or while the elector notices the deadline; none of them, scheduled or
 * partition run, may start in a term past its deadline.
 *
 * <p>A run reports itself late when its first line finds the term past its deadline. A freeze (or a
 * loaded machine) can fall between the admission check and that line: the run was admitted in time
 * and found late, once per thread; its thread's next run is checked again and refused. So each
 * thread may report at most one late run per term (of the election or of a partition); the runs the
 * scheduler fires at once after a freeze (88 late runs over four freezes before the check was made
 * on every path) are many.
 */
@ExtendWith(RedisExtension.class)
class LeaderOnlyDeadlineTests {

    private static final Duration WAIT = TestTimeScale.scaled(Duration.ofSeconds(60));

    private static final Duration TTL = Duration.ofSeconds(1);

    private static final int FREEZES = 4;

    private RedisServer server;

    private String name;

    private AppNodes nodes;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "deadline-" + System.nanoTime();
        this.nodes =
                new AppNodes(
                        DeadlineNodeApplication.class,
                        this::arguments,
                        Path.of("target", "leader-only-deadline-events.txt"));
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
                "--spring.task.scheduling.pool.size=2",
                "--redlease.name=" + name,
                "--redlease.instance-id=" + id,
                "--redlease.ttl=" + TTL.toMillis() + "ms",
                "--redlease.renew-interval=200ms",
                "--redlease.acquire-interval=100ms",
                "--redlease.partitions.shards.count=8",
                "--redlease.partitions.shards.balance-interval=100ms",
                "--redlease.partitions.shards.settle=100ms",
                "--logging.level.root=WARN");
    }

    private static boolean run(Event event, String kind, long after) {
        return event.kind().equals("run")
                && event.time() > after
                && event.details().get("kind").equals(kind)
                && event.details().get("late").equals("false");
    }

    @Test
    void noLeaderOnlyRunStartsPastItsTermsDeadlineAfterTheJvmWasFrozen() throws Exception {
        nodes.start("a");
        nodes.await(event -> run(event, "scheduled", 0), WAIT);
        nodes.await(event -> run(event, "partition", 0), WAIT);
        for (int freeze = 0; freeze < FREEZES; freeze++) {
            nodes.signal("a", "STOP");
            // The fault window: the JVM stays frozen well past its terms' deadlines.
            Thread.sleep(TTL.multipliedBy(2).toMillis());
            long resumed = System.currentTimeMillis();
            nodes.signal("a", "CONT");
            // Each job runs again on time, in new terms, after the resumed JVM stepped down.
            nodes.await(event -> run(event, "scheduled", resumed), WAIT);
            nodes.await(event -> run(event, "partition", resumed), WAIT);
        }
        List<Event> late =
                nodes.events().stream()
                        .filter(event -> event.kind().equals("run"))
                        .filter(event -> event.details().get("late").equals("true"))
                        .toList();
        long runs = nodes.events().stream().filter(event -> event.kind().equals("run")).count();
        System.out.printf(
                "leader-only deadline: %d runs, %d found their term past its deadline, over %d"
                        + " freezes of %d ms (TTL %d ms)%n",
                runs, late.size(), FREEZES, TTL.multipliedBy(2).toMillis(), TTL.toMillis());
        Map<List<String>, Long> perThreadAndTerm =
                late.stream()
                        .collect(
                                Collectors.groupingBy(
                                        event ->
                                                List.of(
                                                        event.details().get("thread"),
                                                        event.details().get("kind"),
                                                        event.details().get("partition"),
                                                        event.details().get("token")),
                                        Collectors.counting()));
        assertThat(perThreadAndTerm.values())
                .as(
                        "late runs per thread and term (more than one: admitted past the deadline): %s",
                        late)
                .allMatch(count -> count == 1);
    }
}
