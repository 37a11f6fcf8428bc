package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** Runs small sample test classes through the JUnit launcher and checks what they were given. */
class RedisExtensionTests {

    /** Servers seen by the samples, in the order they were injected. */
    static final List<RedisServer> seen = new CopyOnWriteArrayList<>();

    @Test
    void sharedServerIsOneForTheClassItsNestedClassesAndLifecycleMethods() {
        seen.clear();
        TestExecutionSummary summary = run(SharedSample.class);
        assertSucceeded(summary, 3);
        // @BeforeAll once; per test: constructor, @BeforeEach and the test itself
        assertThat(seen).hasSize(10);
        assertThat(Set.copyOf(seen)).hasSize(1);
    }

    @Test
    void sharedServerIsClosedAfterTheClass() {
        seen.clear();
        assertSucceeded(run(SharedSample.class), 3);
        RedisServer server = seen.get(0);
        assertThat(server.isClosed()).isTrue();
        if (server.isManaged()) {
            assertThat(server.isRunning()).isFalse();
        }
    }

    @Test
    void dedicatedServerIsFreshForEachTestAndClosedAfterIt() {
        seen.clear();
        assertSucceeded(run(DedicatedSample.class), 2);
        // each test records: a dedicated server, the shared one, a second dedicated one
        assertThat(seen).hasSize(6);
        RedisServer shared = seen.get(1);
        assertThat(seen.get(4)).isSameAs(shared);
        List<RedisServer> dedicated = List.of(seen.get(0), seen.get(2), seen.get(3), seen.get(5));
        assertThat(Set.copyOf(dedicated)).hasSize(4).doesNotContain(shared);
        for (RedisServer server : seen) {
            assertThat(server.isClosed()).isTrue();
        }
    }

    @Test
    void dedicatedOptionsConfigureTheServer() {
        seen.clear();
        assertSucceeded(run(DedicatedOptionsSample.class), 1);
    }

    @Test
    void leverOnAServerWithoutLeversAbortsTheTest() {
        seen.clear();
        TestExecutionSummary summary = run(AbortSample.class);
        assertThat(summary.getTestsAbortedCount()).isEqualTo(1);
        assertThat(summary.getTestsFailedCount()).isZero();
    }

    private static TestExecutionSummary run(Class<?> testClass) {
        LauncherDiscoveryRequest request =
                LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass)).build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        return listener.getSummary();
    }

    private static void assertSucceeded(TestExecutionSummary summary, int tests) {
        StringWriter failures = new StringWriter();
        summary.printFailuresTo(new PrintWriter(failures), 20);
        assertThat(summary.getTestsSucceededCount())
                .as("succeeded tests; failures:%n%s", failures)
                .isEqualTo(tests);
        assertThat(summary.getTestsFailedCount()).isZero();
        assertThat(summary.getTestsAbortedCount()).isZero();
    }

    @ExtendWith(RedisExtension.class)
    static class SharedSample {

        SharedSample(RedisServer redis) {
            seen.add(redis);
        }

        @BeforeAll
        static void beforeAll(RedisServer redis) {
            seen.add(redis);
        }

        @BeforeEach
        void beforeEach(RedisServer redis) {
            seen.add(redis);
        }

        @Test
        void first(RedisServer redis) {
            seen.add(redis);
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }

        @Test
        void second(RedisServer redis) {
            seen.add(redis);
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }

        @Nested
        class Inner {

            @Test
            void third(RedisServer redis) {
                seen.add(redis);
            }
        }
    }

    @ExtendWith(RedisExtension.class)
    static class DedicatedSample {

        @Test
        void first(
                @Dedicated RedisServer dedicated,
                RedisServer shared,
                @Dedicated RedisServer other) {
            check(dedicated, shared, other);
        }

        @Test
        void second(
                @Dedicated RedisServer dedicated,
                RedisServer shared,
                @Dedicated RedisServer other) {
            check(dedicated, shared, other);
        }

        private static void check(RedisServer dedicated, RedisServer shared, RedisServer other) {
            seen.add(dedicated);
            seen.add(shared);
            seen.add(other);
            assertThat(dedicated.command("PING")).isEqualTo("PONG");
            assertThat(other.command("PING")).isEqualTo("PONG");
            if (dedicated.isManaged()) {
                assertThat(dedicated.port()).isNotEqualTo(shared.port()).isNotEqualTo(other.port());
            }
        }
    }

    @ExtendWith(RedisExtension.class)
    static class DedicatedOptionsSample {

        @Test
        void configured(
                @Dedicated(
                                appendOnly = true,
                                appendFsync = "always",
                                requirePass = "pw",
                                extraArgs = {"--maxmemory-policy", "allkeys-lru"})
                        RedisServer redis) {
            seen.add(redis);
            assertThat(redis.password()).isEqualTo("pw");
            assertThat(redis.command("CONFIG", "GET", "appendonly"))
                    .isEqualTo(List.of("appendonly", "yes"));
            assertThat(redis.command("CONFIG", "GET", "appendfsync"))
                    .isEqualTo(List.of("appendfsync", "always"));
            assertThat(redis.command("CONFIG", "GET", "maxmemory-policy"))
                    .isEqualTo(List.of("maxmemory-policy", "allkeys-lru"));
        }
    }

    @ExtendWith(RedisExtension.class)
    static class AbortSample {

        @Test
        void needsLevers(RedisServer shared) {
            try (RedisServer external = RedisServer.external(shared.url())) {
                external.pause();
            }
        }
    }
}
