package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Many electors in one JVM share a few loop threads and a bounded pool for Redis calls. */
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
                assertThat(threads("redlease-loop-")).isBetween(1L, 4L);
                assertThat(threads("redlease-io-")).isBetween(1L, (long) ElectorRuntime.IO_THREADS);
            } finally {
                electors.forEach(Elector::stopAsync);
                electors.forEach(Elector::close);
            }
        }
    }

    @Test
    void theRedisPoolReusesIdleThreadsAndQueuesBeyondItsMaximum() throws Exception {
        ThreadPoolExecutor io = (ThreadPoolExecutor) new ElectorRuntime(2).io();
        LinkedTransferQueue<Runnable> queue = (LinkedTransferQueue<Runnable>) io.getQueue();
        for (int i = 0; i < 200; i++) {
            io.submit(() -> {}).get();
            // The thread is back, idle, before the next call.
            await().pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(1))
                    .until(queue::hasWaitingConsumer);
        }
        assertThat(io.getLargestPoolSize()).as("threads for calls one after another").isEqualTo(1);

        int calls = ElectorRuntime.IO_THREADS + 36;
        CountDownLatch hold = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(calls);
        for (int i = 0; i < calls; i++) {
            io.execute(
                    () -> {
                        try {
                            hold.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                        done.countDown();
                    });
        }
        await().until(() -> io.getActiveCount() == ElectorRuntime.IO_THREADS);
        assertThat(io.getQueue()).hasSize(calls - ElectorRuntime.IO_THREADS);
        hold.countDown();
        assertThat(done.await(10, TimeUnit.SECONDS)).as("queued calls ran").isTrue();
        assertThat(io.getLargestPoolSize()).isEqualTo(ElectorRuntime.IO_THREADS);
        io.shutdown();
        assertThat(io.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith(prefix))
                .count();
    }
}
