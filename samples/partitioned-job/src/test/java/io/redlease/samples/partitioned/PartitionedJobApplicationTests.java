package io.redlease.samples.partitioned;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Two copies of the sample against a real Redis: they split the tenant partitions evenly, each
 * partition is synced by its owner under that partition's token, the endpoint shows the assignment,
 * and when one copy stops its partitions move in new terms that fence the old ones out.
 */
@ExtendWith(RedisExtension.class)
class PartitionedJobApplicationTests {

    private static final int PARTITIONS = 16;

    private final String name = "{tenant-sync-test-" + System.nanoTime() + "}";

    private final Map<String, ConfigurableApplicationContext> instances = new HashMap<>();

    private RedisServer server;

    @BeforeEach
    void setUp(RedisServer server) {
        this.server = server;
    }

    @AfterEach
    void tearDown() {
        instances.values().forEach(ConfigurableApplicationContext::close);
    }

    private ConfigurableApplicationContext start(String id, WebApplicationType web) {
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(PartitionedJobApplication.class)
                        .web(web)
                        .properties(
                                "spring.main.banner-mode=off",
                                "server.port=0",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.instance-id=" + id,
                                "redlease.ttl=2s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=200ms",
                                "redlease.partitions.tenants.balance-interval=100ms",
                                "redlease.partitions.tenants.settle=200ms",
                                "sample.sync.interval=100ms",
                                "spring.lifecycle.timeout-per-shutdown-phase=5s")
                        .run();
        instances.put(id, context);
        return context;
    }

    private static PartitionedElection tenants(ConfigurableApplicationContext context) {
        return context.getBean(Elections.class).partitioned(TenantSync.PARTITIONS);
    }

    private Map<Object, Object> record(int partition) {
        ConfigurableApplicationContext any = instances.values().iterator().next();
        String key = any.getBean(TenantSync.class).syncKey(partition);
        return any.getBean(StringRedisTemplate.class).opsForHash().entries(key);
    }

    /** Whether every partition's latest sync was made by its owner, with its owner's token. */
    private boolean everyPartitionSyncedByItsOwner() {
        for (ConfigurableApplicationContext context : instances.values()) {
            PartitionedElection election = tenants(context);
            for (int p : election.owned()) {
                Map<Object, Object> record = record(p);
                String token = Long.toString(election.token(p).orElse(-1));
                if (!token.equals(record.get("token"))
                        || !election.instanceId().equals(record.get("instance"))) {
                    return false;
                }
            }
        }
        return true;
    }

    @Test
    void twoInstancesSplitThePartitionsAndEachPartitionIsFencedByItsOwnToken() throws Exception {
        ConfigurableApplicationContext a = start("a", WebApplicationType.SERVLET);
        ConfigurableApplicationContext b = start("b", WebApplicationType.NONE);
        await().atMost(Duration.ofSeconds(15))
                .until(() -> tenants(a).owned().size() == 8 && tenants(b).owned().size() == 8);
        Set<Integer> all = new HashSet<>(tenants(a).owned());
        all.addAll(tenants(b).owned());
        assertThat(all).hasSize(PARTITIONS);
        await().atMost(Duration.ofSeconds(10)).until(this::everyPartitionSyncedByItsOwner);
        // Every tenant is routed to exactly one partition; the counts recorded are the owners'.
        TenantSync sync = a.getBean(TenantSync.class);
        int routed = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            routed += sync.tenants(p).size();
            assertThat(record(p))
                    .containsEntry("tenants", Integer.toString(sync.tenants(p).size()));
        }
        assertThat(routed).isEqualTo(200);

        String owned =
                tenants(a).owned().stream().map(String::valueOf).collect(Collectors.joining(","));
        String assignment = get(a, "/actuator/redlease/partitions/tenants");
        assertThat(assignment)
                .contains("\"members\":[\"a\",\"b\"]")
                .contains("\"owned\":[" + owned + "]")
                .contains("\"share\":8");

        // b stops: its partitions move to a in new terms, and b's old tokens are fenced out.
        SortedSet<Integer> moved = tenants(b).owned();
        Map<Integer, Long> old = new HashMap<>();
        moved.forEach(p -> old.put(p, tenants(b).token(p).orElseThrow()));
        instances.remove("b").close();
        await().atMost(Duration.ofSeconds(15)).until(() -> tenants(a).owned().size() == PARTITIONS);
        await().atMost(Duration.ofSeconds(10)).until(this::everyPartitionSyncedByItsOwner);
        StringRedisTemplate redis = a.getBean(StringRedisTemplate.class);
        for (int p : moved) {
            long token = tenants(a).token(p).orElseThrow();
            assertThat(token).isGreaterThan(old.get(p));
            assertThat(tenants(a).fencer(p, old.get(p)).hset(sync.syncKey(p), "instance", "b"))
                    .as("a write of partition %d with b's old token", p)
                    .isFalse();
            assertThat(record(p)).containsEntry("instance", "a");
            List<String> terms =
                    redis.opsForList().range(tenants(a).electionName(p) + ":terms", 0, -1);
            assertThat(terms).endsWith(token + ":a").contains(old.get(p) + ":b");
            assertThat(terms.stream().map(t -> Long.parseLong(t.split(":")[0])).toList())
                    .isSorted()
                    .doesNotHaveDuplicates();
        }
    }

    private static String get(ConfigurableApplicationContext context, String path)
            throws Exception {
        String port = context.getEnvironment().getProperty("local.server.port");
        HttpResponse<String> response =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(
                                                URI.create("http://127.0.0.1:" + port + path))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }
}
