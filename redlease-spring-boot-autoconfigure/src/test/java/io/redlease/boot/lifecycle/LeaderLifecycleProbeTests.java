package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.redlease.boot.event.LeaderLifecycleFailedEvent;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.Lifecycle;

/** Review probes: leader-only lifecycle beans declared @Lazy or with the prototype scope. */
@ExtendWith(RedisExtension.class)
class LeaderLifecycleProbeTests {

    private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-lifecycle-probe:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        LeaderLifecycleProbeApplication.events.clear();
    }

    @AfterEach
    void tearDown() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext instance(String id, String... properties) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=3s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=300ms"));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(LeaderLifecycleProbeApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(all.toArray(String[]::new))
                        .run();
        instances.add(context);
        return context;
    }

    @Test
    void aLazyLeaderOnlyBeanStartsOnTheLeader() {
        ConfigurableApplicationContext a = instance("a", "test.lazy=true");
        await().until(() -> a.getBean(Elector.class).isLeader());
        await().until(() -> LeaderLifecycleProbeApplication.events.contains("start:lazy"));
    }

    @Test
    void aPrototypeLeaderOnlyBeanIsRefusedAtStartupNamingIt() {
        assertThatException()
                .isThrownBy(() -> instance("a", "test.prototype=true"))
                .withStackTraceContaining("prototypeLifecycle");
    }

    @Test
    void aStopThatNeverCallsBackIsReportedAndTheLeaseIsReleasedAfterTheDrainTimeout() {
        ConfigurableApplicationContext a =
                instance(
                        "a",
                        "test.never-stops=true",
                        "spring.lifecycle.timeout-per-shutdown-phase=2s");
        List<LeaderLifecycleFailedEvent> failures = new CopyOnWriteArrayList<>();
        a.addApplicationListener((ApplicationListener<LeaderLifecycleFailedEvent>) failures::add);
        Elector elector = a.getBean(Elector.class);
        await().until(() -> LeaderLifecycleProbeApplication.events.contains("start:never-stops"));
        long token = elector.token().orElseThrow();
        elector.resign();
        await().until(() -> elector.token().orElse(token) != token);
        await().until(() -> !failures.isEmpty());
        assertThat(failures)
                .anySatisfy(
                        failure -> {
                            assertThat(failure.getMember()).isEqualTo("neverStops");
                            assertThat(failure.getAction()).isEqualTo(LeaderLifecycles.Action.STOP);
                        });
        assertThat(a.getBean(MeterRegistry.class).find("redlease.lifecycle.failures").counter())
                .isNotNull();
    }

    @Test
    void aLeaderOnlyBeanInAChildContextIsRefusedNamingIt() {
        SpringApplicationBuilder parent =
                new SpringApplicationBuilder(LeaderLifecycleProbeApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=a",
                                "redlease.auto-startup=false");
        SpringApplicationBuilder child =
                parent.child(LeaderLifecycleProbeApplication.Child.class)
                        .web(WebApplicationType.NONE);
        try {
            assertThatException()
                    .isThrownBy(() -> instances.add(child.run()))
                    .withStackTraceContaining("'childLifecycle' is in a child context");
            assertThat(LeaderLifecycleProbeApplication.events).doesNotContain("start:child");
        } finally {
            if (parent.context() != null) {
                instances.add(parent.context());
            }
        }
    }

    private static long count(String event) {
        return LeaderLifecycleProbeApplication.events.stream().filter(event::equals).count();
    }

    @Test
    void aBeanStillStoppingFromTheLastTermIsNotStartedAgainUntilItHasStopped() {
        LeaderLifecycleProbeApplication.slowStopRelease =
                new java.util.concurrent.CountDownLatch(1);
        ConfigurableApplicationContext a =
                instance(
                        "a",
                        "test.slow-stop=true",
                        "spring.lifecycle.timeout-per-shutdown-phase=2s");
        List<LeaderLifecycleFailedEvent> failures = new CopyOnWriteArrayList<>();
        a.addApplicationListener((ApplicationListener<LeaderLifecycleFailedEvent>) failures::add);
        try {
            Elector elector = a.getBean(Elector.class);
            await().until(() -> count("start:marker") == 1);
            long token = elector.token().orElseThrow();
            elector.resign(); // the slow bean overruns the drain timeout; the same instance wins
            // again
            await().atMost(java.time.Duration.ofSeconds(15))
                    .until(() -> count("start:marker") == 2);
            assertThat(elector.token().orElseThrow()).isNotEqualTo(token);
            assertThat(count("start:slow"))
                    .as("starts of a bean whose previous stop has not called back")
                    .isEqualTo(1);
            assertThat(failures)
                    .anySatisfy(
                            failure -> {
                                assertThat(failure.getMember()).isEqualTo("slowStop");
                                assertThat(failure.getAction())
                                        .isEqualTo(LeaderLifecycles.Action.START);
                            });
        } finally {
            LeaderLifecycleProbeApplication.slowStopRelease.countDown();
        }
        await().until(() -> count("start:slow") == 2);
        List<String> events = LeaderLifecycleProbeApplication.events;
        assertThat(events.indexOf("stopped:slow")).isLessThan(events.lastIndexOf("start:slow"));
    }

    @Test
    void aFactoryBeanProductAndAnInterfaceTypedBeanRunOnTheLeaderOnly() {
        ConfigurableApplicationContext a = instance("a", "test.shapes=true");
        await().until(() -> a.getBean(Elector.class).isLeader());
        await().until(
                        () ->
                                a.getBean("factoryLifecycle", Lifecycle.class).isRunning()
                                        && a.getBean("interfaceLifecycle", Lifecycle.class)
                                                .isRunning());
        ConfigurableApplicationContext b = instance("b", "test.shapes=true");
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
        assertThat(b.getBean("factoryLifecycle", Lifecycle.class).isRunning()).isFalse();
        assertThat(b.getBean("interfaceLifecycle", Lifecycle.class).isRunning()).isFalse();
        b.start();
        assertThat(b.getBean(Elector.class).isLeader()).isFalse();
        assertThat(b.getBean("factoryLifecycle", Lifecycle.class).isRunning()).isFalse();
        assertThat(b.getBean("interfaceLifecycle", Lifecycle.class).isRunning()).isFalse();
    }

    @Test
    void aStopThatThrowsIsReportedAndTheElectionGoesOn() {
        ConfigurableApplicationContext a = instance("a", "test.throwing-stop=true");
        List<LeaderLifecycleFailedEvent> failures = new CopyOnWriteArrayList<>();
        a.addApplicationListener((ApplicationListener<LeaderLifecycleFailedEvent>) failures::add);
        Elector elector = a.getBean(Elector.class);
        await().until(() -> count("start:throwing") == 1);
        long token = elector.token().orElseThrow();
        elector.resign();
        await().until(() -> count("start:throwing") == 2);
        assertThat(elector.token().orElseThrow()).isNotEqualTo(token);
        assertThat(failures)
                .anySatisfy(
                        failure -> {
                            assertThat(failure.getMember()).isEqualTo("throwingStop");
                            assertThat(failure.getAction()).isEqualTo(LeaderLifecycles.Action.STOP);
                        });
    }

    @Test
    void aContextClosedWhileItsElectionIsDecidedLeavesNoBeanRunning() {
        for (int i = 0; i < 5; i++) {
            ConfigurableApplicationContext context = instance("a" + i, "test.lazy=true");
            Lifecycle bean = context.getBean("lazyLifecycle", Lifecycle.class);
            if (i % 2 == 1) {
                await().until(bean::isRunning);
            }
            context.close();
            assertThat(bean.isRunning()).as("bean after close, round " + i).isFalse();
            assertThat(count("start:lazy")).isEqualTo(count("stop:lazy"));
        }
    }

    @Test
    void rapidResignationsNeverStartTheBeanWhileItStillRuns() {
        ConfigurableApplicationContext a = instance("a", "test.overlap=true");
        Elector elector = a.getBean(Elector.class);
        for (int i = 1; i <= 5; i++) {
            long starts = i;
            await().until(() -> count("start:async") == starts);
            elector.resign();
            elector.resign();
        }
        await().until(() -> count("start:async") == 6);
        assertThat(LeaderLifecycleProbeApplication.events).doesNotContain("overlap");
        assertThat(count("stopped:async")).isEqualTo(5);
    }
}
