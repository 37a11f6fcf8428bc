package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.redlease.boot.actuate.RedleaseEndpoint;
import io.redlease.boot.autoconfigure.actuate.RedleaseEndpointAutoConfiguration;
import io.redlease.boot.discovery.LeaderForwarder;
import io.redlease.core.Elector;
import io.redlease.core.LeaderInfo;
import io.redlease.core.LeaderMetadata;
import io.redlease.core.LeadershipContext;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

/** Leader discovery: what an instance advertises, how others read it, and the forwarder. */
@ExtendWith(RedisExtension.class)
class LeaderDiscoveryAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-discovery-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderDiscoveryAutoConfiguration.class,
                                        RedleaseEndpointAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.ttl=1s",
                                "management.endpoints.web.exposure.include=redlease");
    }

    @Test
    void discoveryIsOffByDefault() {
        contextRunner.run(
                context -> {
                    assertThat(context).doesNotHaveBean(LeaderMetadata.class);
                    assertThat(context).doesNotHaveBean(LeaderForwarder.class);
                    assertThat(context.getBean(Elector.class).advertised()).isEmpty();
                });
    }

    @Test
    void theLeaderAdvertisesItsUrlVersionAndAttributesToEveryReader() {
        contextRunner
                .withPropertyValues(
                        "redlease.instance-id=a",
                        "redlease.discovery.enabled=true",
                        "redlease.discovery.url=http://orders-a.internal:8081",
                        "redlease.discovery.version=2.4.0",
                        "redlease.discovery.attributes.zone=eu-west-1a")
                .run(
                        context -> {
                            Elector elector = context.getBean(Elector.class);
                            await().until(elector::isLeader);
                            LeaderInfo info =
                                    context.getBean(LeadershipContext.class)
                                            .leaderInfo()
                                            .orElseThrow();
                            assertThat(info.instanceId()).isEqualTo("a");
                            assertThat(info.url()).contains("http://orders-a.internal:8081");
                            assertThat(info.version()).contains("2.4.0");
                            assertThat(info.attributes())
                                    .containsExactly(Map.entry("zone", "eu-west-1a"));
                            RedleaseEndpoint.ElectionDescriptor described =
                                    context.getBean(RedleaseEndpoint.class)
                                            .elections()
                                            .get("default");
                            assertThat(described.leader())
                                    .isEqualTo(
                                            new RedleaseEndpoint.LeaderDescriptor(
                                                    "a",
                                                    "http://orders-a.internal:8081",
                                                    "2.4.0",
                                                    Map.of("zone", "eu-west-1a")));
                        });
    }

    @Test
    void theUrlIsDerivedFromTheServerAddressPortAndContextPath() {
        contextRunner
                .withPropertyValues(
                        "redlease.discovery.enabled=true",
                        "server.address=10.1.2.3",
                        "server.port=9090",
                        "server.servlet.context-path=/orders/")
                .run(
                        context ->
                                assertThat(context.getBean(LeaderMetadata.class).url())
                                        .isEqualTo("http://10.1.2.3:9090/orders"));
        contextRunner
                .withPropertyValues(
                        "redlease.discovery.enabled=true",
                        "server.address=::1",
                        "server.port=8443",
                        "server.ssl.enabled=true")
                .run(
                        context ->
                                assertThat(context.getBean(LeaderMetadata.class).url())
                                        .isEqualTo("https://[::1]:8443"));
    }

    @Test
    void aRandomServerPortWithoutAnUrlFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues("redlease.discovery.enabled=true", "server.port=0")
                .run(
                        context -> {
                            Throwable cause = context.getStartupFailure();
                            while (cause != null
                                    && !(cause instanceof InvalidRedleasePropertyException)) {
                                cause = cause.getCause();
                            }
                            assertThat(cause).isNotNull();
                            InvalidRedleasePropertyException failure =
                                    (InvalidRedleasePropertyException) cause;
                            assertThat(failure.property()).isEqualTo("redlease.discovery.url");
                            assertThat(failure.rule()).contains("server.port=0");
                            assertThat(failure.fix()).contains("Set redlease.discovery.url");
                        });
    }

    @Test
    void anUrlOtherInstancesCannotCallFailsStartup() {
        contextRunner
                .withPropertyValues(
                        "redlease.discovery.enabled=true", "redlease.discovery.url=orders:8080")
                .run(
                        context -> {
                            Throwable cause = context.getStartupFailure();
                            while (cause != null
                                    && !(cause
                                            instanceof
                                            InvalidConfigurationPropertyValueException)) {
                                cause = cause.getCause();
                            }
                            assertThat(cause).isNotNull();
                            InvalidConfigurationPropertyValueException failure =
                                    (InvalidConfigurationPropertyValueException) cause;
                            assertThat(failure.getName()).isEqualTo("redlease.discovery.url");
                            assertThat(failure.getReason()).contains("absolute http or https URL");
                        });
    }

    @Test
    void aFollowerForwardsToTheLeaderAndTheLeaderServesItself() throws IOException {
        AtomicReference<String> forwardedBy = new AtomicReference<>();
        HttpServer leaderWeb =
                HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        leaderWeb.createContext(
                "/jobs",
                exchange -> {
                    forwardedBy.set(
                            exchange.getRequestHeaders()
                                    .getFirst(LeaderForwarder.FORWARDED_HEADER));
                    byte[] body = "accepted by leader".getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(200, body.length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                });
        leaderWeb.start();
        try {
            contextRunner
                    .withPropertyValues(
                            "redlease.instance-id=leader",
                            "redlease.discovery.enabled=true",
                            "redlease.discovery.url=http://127.0.0.1:"
                                    + leaderWeb.getAddress().getPort())
                    .run(
                            leader -> {
                                await().until(leader.getBean(Elector.class)::isLeader);
                                contextRunner
                                        .withPropertyValues(
                                                "redlease.instance-id=follower",
                                                "redlease.discovery.enabled=true",
                                                "redlease.discovery.url=http://127.0.0.1:1")
                                        .run(
                                                follower ->
                                                        forwardFrom(follower, leader, forwardedBy));
                            });
        } finally {
            leaderWeb.stop(0);
        }
    }

    private static void forwardFrom(
            ConfigurableApplicationContext follower,
            ConfigurableApplicationContext leader,
            AtomicReference<String> forwardedBy) {
        LeaderForwarder forwarder = follower.getBean(LeaderForwarder.class);
        assertThat(forwarder.leaderUrl()).isPresent();
        String reply =
                forwarder.forward(rest -> rest.post().uri("/jobs").retrieve().body(String.class));
        assertThat(reply).isEqualTo("accepted by leader");
        assertThat(forwardedBy.get()).isEqualTo("follower");
        LeaderForwarder own = leader.getBean(LeaderForwarder.class);
        assertThat(own.leaderUrl()).isEmpty();
        assertThatExceptionOfType(LeaderForwarder.NoLeaderUrlException.class)
                .isThrownBy(() -> own.forward(rest -> "served here"))
                .withMessageContaining("this instance leads it");
    }
}
