package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.test.RedisClusterSetup;
import io.redlease.test.RedisNode;
import io.redlease.test.RedisSentinelSetup;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The application on Redis Sentinel and Redis Cluster, configured only through Spring Boot's own
 * {@code spring.data.redis.*} properties: the leader-only job keeps writing through the fence
 * across a failover, and the tokens it wrote never go down.
 */
class RedleaseTopologyApplicationTests {

    private static final Duration FAILOVER = Duration.ofSeconds(60);

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(TestApplication.class)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run();
    }

    private static String addresses(List<RedisNode> nodes) {
        return nodes.stream().map(RedisNode::address).collect(Collectors.joining(","));
    }

    /** The tokens of the job's log on one node, in the order they were applied. */
    /**
     * Reads the job's log of tokens on a node, again if the failover resets the read's connection
     * (Sentinel kills the clients of the nodes whose role it changes).
     */
    private static List<Long> tokens(RedisNode node, String name) {
        List<Long> tokens = new ArrayList<>();
        Object log =
                await().atMost(Duration.ofSeconds(10))
                        .ignoreExceptionsInstanceOf(UncheckedIOException.class)
                        .until(() -> node.command("LRANGE", name + ":log", "0", "-1"), any -> true);
        if (log instanceof List<?> entries) {
            for (Object entry : entries) {
                tokens.add(Long.parseLong(((String) entry).split(":")[0]));
            }
        }
        return tokens;
    }

    private static void assertNeverDecreasing(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i))
                    .as("token #%d of %s", i, tokens)
                    .isGreaterThanOrEqualTo(tokens.get(i - 1));
        }
    }

    @Test
    void keepsLeadingThroughASentinelFailover() {
        try (RedisSentinelSetup setup = RedisSentinelSetup.start(Duration.ofMillis(500))) {
            String name = "{sentinel-" + System.nanoTime() + "}";
            try (ConfigurableApplicationContext context =
                    start(
                            "spring.data.redis.sentinel.master=" + RedisSentinelSetup.MASTER_NAME,
                            "spring.data.redis.sentinel.nodes=" + addresses(setup.sentinels()),
                            "spring.data.redis.timeout=1s",
                            "redlease.name=" + name,
                            "redlease.ttl=1s")) {
                Elector elector = context.getBean(Elector.class);
                RedisNode first = setup.currentPrimary();
                await().atMost(Duration.ofSeconds(20)).until(() -> tokens(first, name).size() > 3);
                long firstToken = elector.token().orElseThrow();

                first.kill();
                RedisNode promoted = setup.awaitNewPrimary(first.port(), FAILOVER);
                int before = tokens(promoted, name).size();
                await().atMost(FAILOVER).until(() -> tokens(promoted, name).size() > before + 3);

                List<Long> tokens = tokens(promoted, name);
                assertNeverDecreasing(tokens);
                assertThat(tokens.get(tokens.size() - 1)).isGreaterThan(firstToken);
                assertThat(elector.isLeader()).isTrue();
            }
        }
    }

    @Test
    void keepsLeadingThroughAClusterFailoverAndRefusesANameWithoutAHashTag() {
        try (RedisClusterSetup cluster = RedisClusterSetup.start(Duration.ofSeconds(1))) {
            String nodes = addresses(cluster.nodes());
            String name = "{cluster-" + System.nanoTime() + "}";
            try (ConfigurableApplicationContext context =
                    start(
                            "spring.data.redis.cluster.nodes=" + nodes,
                            "spring.data.redis.lettuce.cluster.refresh.period=1s",
                            "spring.data.redis.lettuce.cluster.refresh.adaptive=true",
                            "spring.data.redis.timeout=1s",
                            "redlease.name=" + name,
                            "redlease.ttl=1s")) {
                String log = name + ":log";
                RedisNode first = cluster.primaryFor(log);
                await().atMost(Duration.ofSeconds(20)).until(() -> tokens(first, name).size() > 3);

                RedisNode promoted = cluster.manualFailover(log, FAILOVER);
                int before = tokens(promoted, name).size();
                await().atMost(FAILOVER).until(() -> tokens(promoted, name).size() > before + 3);
                assertNeverDecreasing(tokens(promoted, name));
                assertThat(context.getBean(Elector.class).isLeader()).isTrue();
            }

            assertThatException()
                    .isThrownBy(
                            () ->
                                    start(
                                            "spring.data.redis.cluster.nodes=" + nodes,
                                            "redlease.name=no-hash-tag"))
                    .havingRootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .withMessageContaining("redlease.name")
                    .withMessageContaining("must contain a hash tag")
                    .withMessageContaining("'{no-hash-tag}'");
        }
    }
}
