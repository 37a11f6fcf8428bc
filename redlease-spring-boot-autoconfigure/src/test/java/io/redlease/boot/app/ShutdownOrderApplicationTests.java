package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TestTimeScale;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;

/**
 * On shutdown an application with a real web server (Tomcat, graceful shutdown) releases its leases
 * before the web server's graceful drain by default, and after it with {@code
 * redlease.shutdown-order=after-http-drain}. A probe in the last phase before the graceful shutdown
 * records, when Spring stops it, whether the lease is still held in Redis.
 */
@ExtendWith(RedisExtension.class)
class ShutdownOrderApplicationTests {

    private RedisServer server;

    private String name;

    private ConfigurableApplicationContext context;

    private BeforeGracefulShutdown probe;

    /** Who held the lease when the web server had started. */
    private final List<String> holderAtWebServerStart = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-shutdown-order-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        if (context != null) {
            context.close();
        }
    }

    private ConfigurableApplicationContext start(String... properties) {
        probe = new BeforeGracefulShutdown(this::holder);
        context =
                new SpringApplicationBuilder(WebApplication.class)
                        .web(WebApplicationType.SERVLET)
                        .initializers(
                                app ->
                                        app.getBeanFactory()
                                                .registerSingleton("beforeGracefulShutdown", probe))
                        .listeners(
                                (ApplicationListener<WebServerInitializedEvent>)
                                        event -> holderAtWebServerStart.add(holder()))
                        .properties(
                                "server.port=0",
                                "server.shutdown=graceful",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=web-1",
                                "redlease.ttl=10s")
                        .properties(properties)
                        .run();
        assertThat(((WebServerApplicationContext) context).getWebServer().getPort())
                .as("a real web server is running")
                .isPositive();
        await().atMost(TestTimeScale.scaled(Duration.ofSeconds(10)))
                .until(() -> context.getBean(Elector.class).isLeader());
        return context;
    }

    private String holder() {
        Object holder = server.command("GET", name + ":leader");
        return holder == null ? "none" : holder.toString();
    }

    @Test
    void theLeaseIsReleasedBeforeTheWebServersGracefulShutdownByDefault() {
        ConfigurableApplicationContext app = start();
        assertThat(holder()).isEqualTo("web-1");

        app.close();

        assertThat(probe.holderAtStop)
                .as("the lease holder when the graceful drain starts")
                .hasSize(1);
        assertThat(probe.holderAtStop.get(0)).as("released before the drain").isEqualTo("none");
        assertThat(holder()).isEqualTo("none");
    }

    @Test
    void theElectionsStartAfterTheWebServerByDefault() {
        start();
        assertThat(holderAtWebServerStart).containsExactly("none");
    }

    @Test
    void theElectionsStartAfterTheWebServerWithAfterHttpDrain() {
        start("redlease.shutdown-order=after-http-drain");
        assertThat(holderAtWebServerStart)
                .as("the lease holder when the web server had started")
                .containsExactly("none");
    }

    @Test
    void afterHttpDrainKeepsTheLeaseThroughTheWebServersGracefulShutdown() {
        ConfigurableApplicationContext app = start("redlease.shutdown-order=after-http-drain");

        app.close();

        assertThat(probe.holderAtStop)
                .as("the lease holder when the graceful drain starts")
                .hasSize(1);
        assertThat(probe.holderAtStop.get(0)).as("still held during the drain").isEqualTo("web-1");
        assertThat(holder()).as("released when the context has closed").isEqualTo("none");
    }

    /** An application with a web server and the starter's auto-configuration. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WebApplication {}

    /**
     * Stops in the phase just above the web server's graceful shutdown, so Spring stops it right
     * before the graceful drain starts; records who holds the lease then.
     */
    static final class BeforeGracefulShutdown implements SmartLifecycle {

        final List<String> holderAtStop = new CopyOnWriteArrayList<>();

        private final Supplier<String> holder;

        private volatile boolean running;

        BeforeGracefulShutdown(Supplier<String> holder) {
            this.holder = holder;
        }

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            holderAtStop.add(holder.get());
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE + 1;
        }
    }
}
