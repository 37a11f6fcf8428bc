package io.redlease.samples.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The sample on WebFlux against a real Redis. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "redlease.ttl=1s",
            "redlease.instance-id=reactive-test",
            "sample.slot-report.cron=* * * * * *",
            "sample.slot-report.build-time=50ms"
        })
@AutoConfigureWebTestClient
@TestRedis
class ReactiveJobApplicationTests {

    private static final String NAME = "{reactive-test-" + System.nanoTime() + "}";

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> NAME);
    }

    @Autowired private WebTestClient web;

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    @Autowired private LeaderWork work;

    @Autowired private SlotReport report;

    @Autowired private StringRedisTemplate redis;

    @Test
    void theLeaderAnswersWithItsTokenFromAnotherThreadOfThePipeline() {
        long token = tester.awaitLeadership().token();
        web.get()
                .uri("/token")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("token " + token);
    }

    @Test
    void aFollowerAnswersConflict() {
        tester.awaitLeadership();
        try (RedleaseTester.ForeignLease lease = tester.stealLease(Duration.ofSeconds(30))) {
            tester.awaitFollower();
            assertThat(lease.instanceId()).isNotEqualTo(elector.instanceId());
            web.get().uri("/token").exchange().expectStatus().isEqualTo(409);
        }
    }

    @Test
    void anAsyncMethodSeesItsTermOnTheExecutor() throws Exception {
        long token = tester.awaitLeadership().token();
        assertThat(work.tokenAsync().get(10, TimeUnit.SECONDS)).isEqualTo(token);
    }

    @Test
    void theSlotReportIsWrittenThroughTheReactiveFenceOncePerSlot() {
        long token = tester.awaitLeadership().token();
        await().atMost(Duration.ofSeconds(15))
                .until(() -> redis.opsForList().size(report.reportsKey()) >= 3);
        List<String> reports = redis.opsForList().range(report.reportsKey(), 0, -1);
        assertThat(reports.stream().map(entry -> entry.split(":")[0]))
                .as("reports %s", reports)
                .doesNotHaveDuplicates();
        assertThat(reports)
                .allSatisfy(entry -> assertThat(entry).contains(":reactive-test:"))
                .anySatisfy(entry -> assertThat(entry).endsWith(":" + token));
        assertThat(elector.isLeader()).isTrue();
    }
}
