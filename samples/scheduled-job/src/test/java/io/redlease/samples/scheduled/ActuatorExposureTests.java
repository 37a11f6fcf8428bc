package io.redlease.samples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.boot.test.TestRedis;
import io.redlease.core.Elector;
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
 * Over HTTP: the status page, the health and the redlease endpoint read (404 for an unknown
 * election); resigning and the job controls are refused while the endpoint keeps its default
 * read-only access, although the endpoint is exposed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestRedis
class ActuatorExposureTests {

    /** One name for the test: the supplier is read each time the property is. */
    private static final String NAME = "{reports-http-" + System.nanoTime() + "}";

    @DynamicPropertySource
    static void election(DynamicPropertyRegistry registry) {
        registry.add("redlease.name", () -> NAME);
    }

    @LocalServerPort private int port;

    @Autowired private Elector elector;

    @Autowired private RedleaseTester tester;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(String method, String path) throws Exception {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .header("Content-Type", "application/json")
                        .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void readsWorkAndResigningIsNotExposedByDefault() throws Exception {
        tester.awaitLeadership();
        HttpResponse<String> status = send("GET", "/status");
        assertThat(status.statusCode()).isEqualTo(200);
        assertThat(status.body()).contains("\"role\":\"leader\"");

        HttpResponse<String> health = send("GET", "/actuator/health");
        assertThat(health.body()).contains("\"redlease\"").contains("\"role\":\"leader\"");

        HttpResponse<String> unknown = send("GET", "/actuator/redlease/no-such-election");
        assertThat(unknown.statusCode()).isEqualTo(404);

        HttpResponse<String> read = send("GET", "/actuator/redlease");
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.body()).contains("\"holder\":\"" + elector.instanceId() + "\"");

        long token = elector.token().getAsLong();
        HttpResponse<String> resign = send("POST", "/actuator/redlease");
        assertThat(resign.statusCode()).isIn(404, 405);
        assertThat(elector.token()).hasValue(token);

        // The once-per-slot job's controls are write operations too: not there by default.
        HttpResponse<String> pause = send("POST", "/actuator/redlease/jobs/slotReport.report");
        assertThat(pause.statusCode()).isIn(404, 405);
    }
}
