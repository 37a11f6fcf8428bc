package io.redlease.boot.app.switches;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The thread that keeps a follower's JVM running without a web server: there while the context of
 * an application with leader-only work runs, gone once it is closed, and never started for an
 * application that has no such work.
 */
@ExtendWith(RedisExtension.class)
class KeepAliveApplicationTests {

    /** Bounds waits for startup and elections on a loaded machine; they end once met. */
    private static final Duration WAIT = Duration.ofMinutes(1);

    private static final String THREAD = "redlease-keep-alive";

    private RedisServer server;

    private String name;

    private LettuceConnectionFactory connections;

    private Elector holder;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
        this.name = "{keep-alive-" + System.nanoTime() + "}";
        this.connections =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        connections.afterPropertiesSet();
        // Another instance leads, so the application under test is a follower.
        this.holder =
                new Elector(
                        new StringRedisTemplate(connections),
                        ElectorConfig.builder(name).instanceId("holder").build());
        holder.start();
        await().atMost(WAIT).until(holder::isLeader);
    }

    @AfterEach
    void tearDown() {
        holder.close();
        connections.destroy();
    }

    private ConfigurableApplicationContext run(Class<?> type, String... args) {
        return new SpringApplicationBuilder(type)
                .web(WebApplicationType.NONE)
                .properties("spring.data.redis.url=" + server.url(), "redlease.name=" + name)
                .run(args);
    }

    private static List<Thread> keepAliveThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().equals(THREAD) && thread.isAlive())
                .toList();
    }

    @Test
    void aFollowerWhoseOnlyWorkIsLeaderOnlyIsKeptRunningUntilTheContextCloses() {
        ConfigurableApplicationContext context = run(LifecycleOnlyApplication.class);
        Optional<Thread> thread;
        try {
            assertThat(context.getBean(Elector.class).isLeader()).isFalse();
            assertThat(keepAliveThreads())
                    .singleElement()
                    .satisfies(alive -> assertThat(alive.isDaemon()).isFalse());
            thread = keepAliveThreads().stream().findFirst();
        } finally {
            context.close();
        }
        await().atMost(WAIT).until(() -> !thread.orElseThrow().isAlive());
        assertThat(keepAliveThreads()).isEmpty();
    }

    @Test
    void lazyInitializationKeepsTheFollowerRunningToo() {
        try (ConfigurableApplicationContext context =
                run(LifecycleOnlyApplication.class, "--spring.main.lazy-initialization=true")) {
            assertThat(keepAliveThreads()).hasSize(1);
        }
        await().atMost(WAIT).until(() -> keepAliveThreads().isEmpty());
    }

    /** A child context with auto-configuration and nothing of its own. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Child {}

    @Test
    void aChildContextNeitherAddsAThreadNorEndsTheParentsWhenItCloses() {
        SpringApplicationBuilder parent =
                new SpringApplicationBuilder(LifecycleOnlyApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(), "redlease.name=" + name);
        ConfigurableApplicationContext child =
                parent.child(Child.class).web(WebApplicationType.NONE).run();
        try {
            assertThat(keepAliveThreads()).hasSize(1);
            child.close();
            assertThat(keepAliveThreads()).as("after the child closed").hasSize(1);
        } finally {
            parent.context().close();
        }
        await().atMost(WAIT).until(() -> keepAliveThreads().isEmpty());
    }

    @Test
    void anApplicationWithoutLeaderOnlyWorkIsNotKeptRunning() {
        try (ConfigurableApplicationContext context = run(QuickStartApplication.class)) {
            assertThat(context.isRunning()).isTrue();
            assertThat(keepAliveThreads()).isEmpty();
        }
    }

    /** An application that starts its work when this instance is elected. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class GrantedListenerApplication {

        @EventListener
        void onGranted(LeadershipGrantedEvent event) {}
    }

    @Test
    void anApplicationThatWorksOnLeadershipEventsIsKeptRunning() {
        try (ConfigurableApplicationContext context = run(GrantedListenerApplication.class)) {
            assertThat(keepAliveThreads()).hasSize(1);
        }
        await().atMost(WAIT).until(() -> keepAliveThreads().isEmpty());
    }

    @Test
    void withAutoStartupOffTheApplicationIsKeptRunningForTheElectionsItStartsItself() {
        try (ConfigurableApplicationContext context =
                run(LifecycleOnlyApplication.class, "--redlease.auto-startup=false")) {
            assertThat(context.getBean(Elector.class).isRunning()).isFalse();
            assertThat(keepAliveThreads()).hasSize(1);
        }
        await().atMost(WAIT).until(() -> keepAliveThreads().isEmpty());
    }

    /** Leader-only work, and a runner that fails after the context was refreshed. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(LifecycleOnlyApplication.class)
    static class FailingRunnerApplication {

        @Bean
        ApplicationRunner failing() {
            return arguments -> {
                throw new IllegalStateException("runner failed on purpose");
            };
        }
    }

    @Test
    void aRunFailingAfterTheRefreshDoesNotLeaveTheJvmRunning() {
        assertThatIllegalStateException()
                .isThrownBy(() -> run(FailingRunnerApplication.class))
                .withStackTraceContaining("runner failed on purpose");
        await().atMost(WAIT).until(() -> keepAliveThreads().isEmpty());
    }

    @Test
    void keepAliveFalseLeavesTheJvmToTheApplication() {
        try (ConfigurableApplicationContext context =
                run(LifecycleOnlyApplication.class, "--redlease.keep-alive=false")) {
            assertThat(context.isRunning()).isTrue();
            assertThat(keepAliveThreads()).isEmpty();
        }
    }
}
