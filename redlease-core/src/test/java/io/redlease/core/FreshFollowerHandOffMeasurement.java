package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Measures the graceful hand-off to a follower that has just joined: in each trial a fresh
 * election, a leader, and a follower on a connection factory of its own, whose leader is stopped as
 * soon as the follower's first outcome came. Not part of the suite (its name is not a test class
 * name); run it with
 *
 * <pre>
 * mvn -B -ntp verify -pl redlease-core -am -Dtest=FreshFollowerHandOffMeasurement \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dtrials=60
 * </pre>
 *
 * It prints {@code FRESH-FOLLOWER n=… p50=… p90=… max=… over10ms=…} (milliseconds, nearest rank)
 * after 5 warm-up trials.
 */
@ExtendWith(RedisExtension.class)
class FreshFollowerHandOffMeasurement {

    private static final int WARM_UP = 5;

    @Test
    void handOffToAFollowerThatHasJustJoined(RedisServer server) throws Exception {
        int trials = Integer.getInteger("trials", 60);
        List<Double> millis = new ArrayList<>();
        try (Templates leaders = new Templates()) {
            StringRedisTemplate redis = leaders.on(server);
            for (int i = 0; i < WARM_UP + trials; i++) {
                String name = "fresh-follower-" + System.nanoTime();
                Recorder leaderEvents = new Recorder();
                Recorder followerEvents = new Recorder();
                Elector leader = new Elector(redis, config(name, "a", leaderEvents));
                try (Templates own = new Templates()) {
                    leader.start();
                    leaderEvents.await("elected", 1);
                    Elector follower =
                            new Elector(own.on(server), config(name, "b", followerEvents));
                    follower.start();
                    follower.firstOutcome().get();
                    long stopped = System.nanoTime();
                    leader.stop();
                    Recorder.Event elected =
                            followerEvents.await(
                                    "elected", 1, TestTimeScale.scaled(Duration.ofSeconds(20)));
                    if (i >= WARM_UP) {
                        millis.add((elected.nanos() - stopped) / 1e6);
                    }
                    follower.close();
                } finally {
                    leader.close();
                }
            }
        }
        assertThat(millis).hasSize(trials);
        List<Double> sorted = millis.stream().sorted().toList();
        System.out.printf(
                "FRESH-FOLLOWER n=%d p50=%.2f p90=%.2f max=%.2f over10ms=%d%n",
                trials,
                rank(sorted, 0.5),
                rank(sorted, 0.9),
                sorted.get(trials - 1),
                sorted.stream().filter(ms -> ms > 10).count());
    }

    private static ElectorConfig config(String name, String id, Observer observer) {
        return ElectorConfig.builder(name)
                .ttl(Duration.ofSeconds(10))
                .acquireInterval(Duration.ofSeconds(5))
                .instanceId(id)
                .observer(observer)
                .build();
    }

    private static double rank(List<Double> sorted, double quantile) {
        return sorted.get((int) Math.ceil(sorted.size() * quantile) - 1);
    }
}
