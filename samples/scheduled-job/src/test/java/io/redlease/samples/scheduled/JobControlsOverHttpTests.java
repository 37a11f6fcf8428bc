package io.redlease.samples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Over HTTP, with the endpoint's access unrestricted: the slot report's controls at {@code
 * /actuator/redlease/jobs/slotReport.report} (run now on the leader, pause, resume), and a 400 for
 * an unknown job.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "management.endpoint.redlease.access=unrestricted")
@TestRedis
class JobControlsOverHttpTests {

    /** One name for the test: the supplier is read each time the property is. */
    private static final String NAME = "{reports-controls-" + System.nanoTime() + "}";

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> NAME);
    }

    @LocalServerPort private int port;

    @Autowired private RedleaseTester tester;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> post(String path, String body) throws Exception {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .header("Content-Type", "application/json")
                        .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theSlotReportIsRunNowPausedAndResumedOverHttp() throws Exception {
        tester.awaitLeadership();
        String job = "/actuator/redlease/jobs/slotReport.report";

        HttpResponse<String> ran = post(job, "{\"action\": \"run\"}");
        assertThat(ran.statusCode()).isEqualTo(200);
        assertThat(ran.body()).contains("\"outcome\":\"completed\"").contains("\"slot\":");

        HttpResponse<String> paused = post(job, "{\"action\": \"pause\"}");
        assertThat(paused.statusCode()).isEqualTo(200);
        assertThat(paused.body()).contains("\"outcome\":\"paused\"").contains("\"paused\":true");

        HttpResponse<String> refused = post(job, "{\"action\": \"run\"}");
        assertThat(refused.body())
                .contains("\"outcome\":\"refused\"")
                .contains("\"refusal\":\"paused\"");

        HttpResponse<String> resumed = post(job, "{\"action\": \"resume\"}");
        assertThat(resumed.body()).contains("\"outcome\":\"resumed\"").contains("\"paused\":false");

        HttpResponse<String> unknown =
                post("/actuator/redlease/jobs/slotReport.nope", "{\"action\": \"run\"}");
        assertThat(unknown.statusCode()).isEqualTo(400);
    }
}
