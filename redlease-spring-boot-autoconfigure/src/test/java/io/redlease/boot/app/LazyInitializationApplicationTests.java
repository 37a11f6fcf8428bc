package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * {@code spring.main.lazy-initialization=true}: Boot keeps beans with {@code @Scheduled} methods
 * out of lazy initialization, so a once-per-slot job and a partitioned job are created, checked and
 * scheduled at startup like any other, and run with their terms bound.
 */
@ExtendWith(RedisExtension.class)
class LazyInitializationApplicationTests {

    static final Collection<String> RUNS = new ConcurrentLinkedQueue<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class LazyApplication {

        @Bean
        Jobs jobs(LeadershipContext leadership) {
            return new Jobs(leadership);
        }
    }

    static class Jobs {

        private final LeadershipContext leadership;

        Jobs(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly(oncePerSlot = true)
        public void slot() {
            Instant slot = leadership.slot().orElseThrow().time();
            RUNS.add("slot " + slot + " token " + leadership.token().orElseThrow());
        }

        @Scheduled(fixedDelay = 200)
        @LeaderOnly(partitions = "shards")
        public void shard() {
            RUNS.add("partition " + leadership.partition().orElseThrow());
        }
    }

    private ConfigurableApplicationContext context;

    @AfterEach
    void tearDown() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void scheduledLeaderOnlyJobsRunUnderGlobalLazyInitialization(RedisServer server) {
        RUNS.clear();
        String name = "{redlease-lazy-" + System.nanoTime() + "}";
        context =
                new SpringApplicationBuilder(LazyApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.main.lazy-initialization=true",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.partitions.shards.count=2",
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms")
                        .run();

        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () ->
                                assertThat(RUNS)
                                        .anyMatch(run -> run.startsWith("slot "))
                                        .anyMatch(run -> run.equals("partition 0"))
                                        .anyMatch(run -> run.equals("partition 1")));
    }
}
