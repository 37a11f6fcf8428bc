package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Many electors in one JVM share a few loop threads; Redis calls over Lettuce park no thread. */
@ExtendWith(RedisExtension.class)
class ElectorRuntimeTests {

    @Test
    void manyElectionsShareAFewThreads(RedisServer server, TestInfo info) {
        try (Templates templates = new Templates()) {
            StringRedisTemplate redis = templates.on(server);
            String prefix = Names.unique(info);
            List<Elector> electors = new ArrayList<>();
            try {
                for (int i = 0; i < 300; i++) {
                    Elector elector =
                            new Elector(
                                    redis,
                                    ElectorConfig.builder(prefix + ":" + i)
                                            .ttl(Duration.ofSeconds(5))
                                            .releaseNotifications(false)
                                            .build());
                    electors.add(elector);
                    elector.start();
                }
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> electors.stream().allMatch(Elector::isLeader));
                assertThat(electors.get(0).protocol().nonBlocking()).isTrue();
                assertThat(threads("redlease-loop-")).isBetween(1L, 4L);
                assertThat(threads("redlease-redis-"))
                        .as("blocking pool threads")
                        .isLessThanOrEqualTo(ScriptRunner.BLOCKING_THREADS);
            } finally {
                electors.forEach(Elector::stopAsync);
                electors.forEach(Elector::close);
            }
        }
    }

    @Test
    void theCallbackExecutorAddsAThreadWhileCallbacksBlock() throws Exception {
        Executor callbacks = ElectorRuntime.callbacks();
        int blocked = ElectorRuntime.CALLBACK_THREADS + 3;
        CountDownLatch hold = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(blocked);
        for (int i = 0; i < blocked; i++) {
            callbacks.execute(
                    () -> {
                        started.countDown();
                        try {
                            hold.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    });
        }
        try {
            // More callbacks block than the executor keeps threads for: each still starts.
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            CountDownLatch quick = new CountDownLatch(1);
            callbacks.execute(quick::countDown);
            assertThat(quick.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            hold.countDown();
        }
    }

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(prefix))
                .count();
    }
}
