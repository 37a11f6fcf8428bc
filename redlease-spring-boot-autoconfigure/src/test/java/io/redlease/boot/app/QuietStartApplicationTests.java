package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
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
 * A normal start, hand-off and stop of an application is quiet and readable: no WARN from redlease
 * or its Redis client, every line redlease logs carries its prefix, a follower names the leader,
 * and a lone instance leads before its leader-only scheduled job first fires.
 */
@ExtendWith(RedisExtension.class)
class QuietStartApplicationTests {

    private final CapturedLogs logs = new CapturedLogs();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-quiet-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        logs.close();
    }

    private ConfigurableApplicationContext instance(
            Class<?> application, String id, String... more) {
        return instanceOn(server.url(), application, id, more);
    }

    private ConfigurableApplicationContext instanceOn(
            String redisUrl, Class<?> application, String id, String... more) {
        List<String> properties =
                new ArrayList<>(
                        List.of(
                                "spring.data.redis.url=" + redisUrl,
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=2s"));
        properties.addAll(List.of(more));
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(application)
                        .web(WebApplicationType.NONE)
                        .initializers(logs)
                        .properties(properties.toArray(String[]::new))
                        .run();
        closeables.add(context);
        return context;
    }

    @Test
    void aLoneInstanceRunsItsLeaderOnlyJobRightAfterStartup() {
        ConfigurableApplicationContext context = instance(HourlyJobApplication.class, "lone");
        HourlyJob job = context.getBean(HourlyJob.class);
        // The job's first fire comes right after startup; its next one only in an hour.
        await().atMost(Duration.ofSeconds(10)).until(() -> job.runs() == 1);
        assertThat(context.getBean(Elector.class).isLeader()).isTrue();
    }

    @Test
    void aSlowFirstConnectionLogsNoWarningAndBurnsNoToken() throws Exception {
        TcpProxy proxy = TcpProxy.start(server);
        closeables.add(proxy);
        proxy.blackhole();
        CompletableFuture<ConfigurableApplicationContext> starting =
                CompletableFuture.supplyAsync(
                        () ->
                                instanceOn(
                                        "redis://" + proxy.host() + ":" + proxy.port(),
                                        QuietApplication.class,
                                        "slow"));
        // The client's handshake is held at the proxy, as on a cold, loaded machine.
        await().until(() -> proxy.heldChunks() > 0);
        // A sleep that only opens the fault window: connecting takes longer than the 2 s TTL.
        Thread.sleep(2_500);
        proxy.pass();
        Elector elector = starting.get().getBean(Elector.class);
        await().until(elector::isLeader);
        assertThat(elector.token()).hasValue(1);
        assertThat(logs.warnings("io.redlease")).isEmpty();
        assertThat(logs.under("io.redlease"))
                .anySatisfy(
                        line ->
                                assertThat(line.message())
                                        .isEqualTo(
                                                "redlease: elected leader of '"
                                                        + name
                                                        + "' with token 1"));
    }

    @Test
    void aHandOffLogsOnlyPrefixedLinesAndTheFollowerNamesTheLeader() {
        String[] debug = {"logging.level.io.redlease=DEBUG"};
        ConfigurableApplicationContext first = instance(HourlyJobApplication.class, "a", debug);
        Elector a = first.getBean(Elector.class);
        await().until(a::isLeader);
        ConfigurableApplicationContext second = instance(HourlyJobApplication.class, "b", debug);
        Elector b = second.getBean(Elector.class);
        await().until(b::leaseHeld);
        first.close();
        await().until(b::isLeader);
        second.close();
        // Spring's RedisMessageListenerContainer logs its own DEBUG lines under the name of the
        // release notifications' subclass of it: those lines are Spring's, not the library's.
        List<CapturedLogs.Line> lines =
                logs.under("io.redlease").stream()
                        .filter(line -> !line.logger().endsWith("ReleaseNotifications$Container"))
                        .toList();
        assertThat(lines).isNotEmpty();
        assertThat(lines).allSatisfy(line -> assertThat(line.message()).startsWith("redlease: "));
        assertThat(lines)
                .extracting(CapturedLogs.Line::message)
                .contains("redlease: following in '" + name + "': instance 'a' leads");
        assertThat(logs.warnings("io.redlease")).isEmpty();
    }

    @Test
    void normalShutdownsLogNoClientWarning() {
        for (int i = 0; i < 20; i++) {
            try (ConfigurableApplicationContext first = instance(QuietApplication.class, "a-" + i);
                    ConfigurableApplicationContext second =
                            instance(QuietApplication.class, "b-" + i)) {
                Elector a = first.getBean(Elector.class);
                Elector b = second.getBean(Elector.class);
                // One leads, the other follows: both hold a subscription to release announcements.
                await().until(() -> a.isLeader() != b.isLeader() && a.leaseHeld() && b.leaseHeld());
            }
        }
        assertThat(logs.warnings("io.lettuce")).isEmpty();
        // Nothing about stopping either. A round trip that the loaded machine held up past its
        // bound over these 20 runs is reported at WARN, as it should be, and is not a shutdown's.
        assertThat(logs.warnings("io.redlease"))
                .filteredOn(line -> !line.message().contains("got no reply within"))
                .isEmpty();
    }

    /** The application a newcomer starts from: only the auto-configuration. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class QuietApplication {}

    /** The Quick start's shape: a leader-only job with a long fixed delay. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    static class HourlyJobApplication {

        @Bean
        HourlyJob hourlyJob() {
            return new HourlyJob();
        }
    }

    /** Counts its runs. */
    static class HourlyJob {

        private final AtomicInteger runs = new AtomicInteger();

        @Scheduled(fixedDelay = 3_600_000)
        @LeaderOnly
        public void run() {
            runs.incrementAndGet();
        }

        /** Returns how often the job ran (called on the bean's proxy, so a method, not a field). */
        public int runs() {
            return runs.get();
        }
    }
}
