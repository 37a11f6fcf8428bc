package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.core.Elector;
import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * User code that blocks or ignores interrupts, in a real application on a real Redis: a slow
 * leadership listener costs no lease, and closing the context is bounded by the shutdown phase.
 */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class RedleaseEngineApplicationTests {

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private final CountDownLatch finish = new CountDownLatch(1);

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-engine-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        finish.countDown();
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(
            String id, List<ApplicationListener<?>> listeners, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=2s"));
        all.addAll(List.of(properties));
        SpringApplicationBuilder builder =
                new SpringApplicationBuilder(StubbornApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new));
        listeners.forEach(builder::listeners);
        ConfigurableApplicationContext context = builder.run();
        instances.add(context);
        return context;
    }

    @Test
    void aSlowLeadershipListenerDoesNotCostTheLease() {
        ApplicationListener<LeadershipGrantedEvent> slow =
                event -> {
                    try {
                        finish.await(6, TimeUnit.SECONDS);
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                };
        ConfigurableApplicationContext a = instance("a", List.of(slow));
        Elector leader = a.getBean(Elector.class);
        await().until(leader::isLeader);
        ConfigurableApplicationContext b = instance("b", List.of(slow));
        Elector follower = b.getBean(Elector.class);
        // Two TTLs while the listener still blocks: the leader keeps its lease.
        await().during(Duration.ofSeconds(4))
                .atMost(Duration.ofSeconds(6))
                .until(() -> leader.isLeader() && !follower.isLeader());
    }

    @Test
    void closingTheContextIsBoundedWhenALeaderOnlyCallIgnoresInterrupts(CapturedOutput output)
            throws Exception {
        ConfigurableApplicationContext a =
                instance("a", List.of(), "spring.lifecycle.timeout-per-shutdown-phase=3s");
        Elector leader = a.getBean(Elector.class);
        await().until(leader::isLeader);
        long oldToken = leader.token().orElseThrow();
        ConfigurableApplicationContext b = instance("b", List.of());
        Elector successor = b.getBean(Elector.class);

        Stubborn stubborn = a.getBean(Stubborn.class);
        CompletableFuture<Boolean> lateWrite = new CompletableFuture<>();
        Thread caller =
                new Thread(
                        () -> {
                            try {
                                lateWrite.complete(stubborn.hold(finish));
                            } catch (Throwable ex) {
                                lateWrite.completeExceptionally(ex);
                            }
                        },
                        "stubborn-caller");
        caller.start();
        await().until(stubborn::holding);

        long closing = System.nanoTime();
        a.close();
        assertThat(Duration.ofNanos(System.nanoTime() - closing))
                .as("the shutdown phase of 3 s, and the release")
                .isLessThan(Duration.ofSeconds(8));
        await().until(successor::isLeader);
        assertThat(successor.token().orElseThrow()).isGreaterThan(oldToken);
        assertThat(output)
                .contains("interrupting thread 'stubborn-caller' in")
                .contains(Stubborn.class.getName() + ".hold()");

        // The late write is refused by the fence, or fails on the closed connection factory.
        finish.countDown();
        Boolean applied =
                lateWrite
                        .handle((value, error) -> error == null ? value : Boolean.FALSE)
                        .get(10, TimeUnit.SECONDS);
        assertThat(applied).isFalse();
        assertThat(server.command("GET", name + ":state")).isNull();
    }

    /** A leader-only method that ignores interrupts, as a blocking driver call would. */
    static class Stubborn {

        private final LeadershipContext leadership;

        private final String name;

        private volatile boolean holding;

        Stubborn(LeadershipContext leadership, String name) {
            this.leadership = leadership;
            this.name = name;
        }

        @LeaderOnly
        public Boolean hold(CountDownLatch finish) {
            Fencer fencer = leadership.requireFencer();
            holding = true;
            while (true) {
                try {
                    if (finish.await(10, TimeUnit.MILLISECONDS)) {
                        break;
                    }
                } catch (InterruptedException ignored) {
                    // Swallowed, as such a call would.
                }
            }
            return fencer.set(name + ":state", "late");
        }

        boolean holding() {
            return holding;
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class StubbornApplication {

        @Bean
        Stubborn stubborn(
                LeadershipContext leadership,
                org.springframework.core.env.Environment environment) {
            return new Stubborn(leadership, environment.getRequiredProperty("redlease.name"));
        }
    }
}
