package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A Prometheus server of a test's own, started as a process on a free loopback port with a
 * throwaway directory, scraping the targets it was given and evaluating the given rule files; and
 * {@code promtool}, which checks and unit-tests rule files.
 *
 * <p>Both come from Debian's {@code prometheus} package (or any {@code prometheus} and {@code
 * promtool} on the {@code PATH} or in {@code /usr/bin}); without them a test fails with a {@link
 * MissingServerException} that says what to install. Closing the server stops it and deletes its
 * directory; so do the JVM shutdown hook and the process's watchdog.
 */
public final class PrometheusServer implements AutoCloseable {

    static final String MISSING_MESSAGE =
            "Prometheus not found: install Debian's prometheus package (apt-get install"
                    + " prometheus), or put prometheus and promtool on the PATH";

    private static final List<String> USUAL_DIRS = List.of("/usr/bin", "/usr/local/bin");

    private static final String LOOPBACK = "127.0.0.1";

    private static final int FREE_PORT_ATTEMPTS = 3;

    private static final Duration START_TIMEOUT = TestTimeScale.scaled(Duration.ofSeconds(30));

    private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(5);

    private final Workspace workspace;

    private final int port;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(QUERY_TIMEOUT).build();

    private PrometheusServer(Workspace workspace, int port) {
        this.workspace = workspace;
        this.port = port;
    }

    /**
     * Returns the {@code promtool} executable.
     *
     * @return its path
     * @throws MissingServerException if there is none, saying what to install
     */
    public static Path promtool() {
        return promtool(Binaries.fromEnvironment());
    }

    static Path promtool(Binaries binaries) {
        Path promtool = binaries.find("promtool", USUAL_DIRS);
        if (promtool == null) {
            throw new MissingServerException(MISSING_MESSAGE);
        }
        return promtool;
    }

    /**
     * Starts a server that scrapes the targets and evaluates the rule files at the given interval.
     *
     * @param job the job label of the targets
     * @param targets the {@code host:port} of each target; each serves its metrics at {@code
     *     /metrics}
     * @param interval the scrape and rule evaluation interval (at least 1s is sensible)
     * @param ruleFiles rule files, copied into the server's directory
     * @return the running server
     * @throws MissingServerException if there is no {@code prometheus} binary
     */
    public static PrometheusServer start(
            String job, List<String> targets, Duration interval, List<Path> ruleFiles) {
        return start(Binaries.fromEnvironment(), job, targets, "/metrics", interval, ruleFiles);
    }

    /**
     * Starts a server like {@link #start(String, List, Duration, List)}, scraping another path,
     * such as Spring Boot's {@code /actuator/prometheus}.
     *
     * @param job the job label of the targets
     * @param targets the {@code host:port} of each target
     * @param metricsPath the path each target serves its metrics at
     * @param interval the scrape and rule evaluation interval
     * @param ruleFiles rule files, copied into the server's directory
     * @return the running server
     * @throws MissingServerException if there is no {@code prometheus} binary
     */
    public static PrometheusServer start(
            String job,
            List<String> targets,
            String metricsPath,
            Duration interval,
            List<Path> ruleFiles) {
        return start(Binaries.fromEnvironment(), job, targets, metricsPath, interval, ruleFiles);
    }

    static PrometheusServer start(
            Binaries binaries,
            String job,
            List<String> targets,
            Duration interval,
            List<Path> ruleFiles) {
        return start(binaries, job, targets, "/metrics", interval, ruleFiles);
    }

    static PrometheusServer start(
            Binaries binaries,
            String job,
            List<String> targets,
            String metricsPath,
            Duration interval,
            List<Path> ruleFiles) {
        Path prometheus = binaries.find("prometheus", USUAL_DIRS);
        if (prometheus == null) {
            throw new MissingServerException(MISSING_MESSAGE);
        }
        Workspace workspace = Workspace.create("redlease-prometheus");
        try {
            Path config = workspace.dir().resolve("prometheus.yml");
            Files.writeString(
                    config,
                    config(job, targets, metricsPath, interval, copy(ruleFiles, workspace)));
            for (int attempt = 1; ; attempt++) {
                int port = Ports.freeLoopbackPort();
                Path log = workspace.dir().resolve("prometheus-" + attempt + ".log");
                ManagedProcess process =
                        workspace.start(
                                "prometheus",
                                List.of(
                                        prometheus.toString(),
                                        "--config.file=" + config,
                                        "--storage.tsdb.path=" + workspace.dir().resolve("data"),
                                        "--web.listen-address=" + LOOPBACK + ":" + port,
                                        "--log.level=warn"),
                                env -> {},
                                log,
                                "KILL");
                PrometheusServer server = new PrometheusServer(workspace, port);
                try {
                    workspace.awaitReady(
                            process,
                            log,
                            START_TIMEOUT,
                            server::isReady,
                            tail -> tail.contains("address already in use"));
                    return server;
                } catch (Workspace.PortInUseException ex) {
                    if (attempt >= FREE_PORT_ATTEMPTS) {
                        throw new IllegalStateException(
                                "Could not start prometheus: port " + port + " is in use", ex);
                    }
                }
            }
        } catch (IOException ex) {
            workspace.close();
            throw new UncheckedIOException(ex);
        } catch (RuntimeException | Error ex) {
            workspace.close();
            throw ex;
        }
    }

    private static List<String> copy(List<Path> ruleFiles, Workspace workspace) throws IOException {
        List<String> copies = new ArrayList<>();
        for (Path file : ruleFiles) {
            Path copy = workspace.dir().resolve(file.getFileName());
            Files.copy(file, copy);
            copies.add(copy.toString());
        }
        return copies;
    }

    private static String config(
            String job,
            List<String> targets,
            String metricsPath,
            Duration interval,
            List<String> ruleFiles) {
        String every = interval.toMillis() + "ms";
        StringBuilder yaml = new StringBuilder();
        yaml.append("global:\n")
                .append("  scrape_interval: ")
                .append(every)
                .append("\n  scrape_timeout: ")
                .append(every)
                .append("\n  evaluation_interval: ")
                .append(every)
                .append("\nrule_files:\n");
        ruleFiles.forEach(file -> yaml.append("  - '").append(file).append("'\n"));
        yaml.append("scrape_configs:\n  - job_name: '")
                .append(job)
                .append("'\n    metrics_path: ")
                .append(metricsPath)
                .append("\n    static_configs:\n      - targets:\n");
        targets.forEach(target -> yaml.append("          - '").append(target).append("'\n"));
        return yaml.toString();
    }

    private boolean isReady() {
        try {
            return get("/-/ready").statusCode() == 200;
        } catch (IOException ex) {
            return false;
        }
    }

    /** Returns the port of the HTTP API. */
    public int port() {
        return port;
    }

    /** Returns the server's directory, holding its configuration, data and log. */
    public Path dir() {
        return workspace.dir();
    }

    /** One sample of an instant vector: its labels and value. */
    public record Sample(Map<String, String> labels, double value) {

        /** Returns a label's value, or null. */
        public @Nullable String label(String name) {
            return labels.get(name);
        }
    }

    /**
     * Evaluates an instant query now and returns its samples; a query that yields no vector (a
     * scalar, an error) fails.
     *
     * @param promql the query
     * @return the samples, empty when the vector is empty
     */
    public List<Sample> query(String promql) {
        String body;
        try {
            HttpResponse<String> response =
                    get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
            body = response.body();
            if (response.statusCode() != 200 || !body.contains("\"resultType\":\"vector\"")) {
                throw new IllegalStateException(
                        "query " + promql + " failed: " + response.statusCode() + " " + body);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("query " + promql + " failed", ex);
        }
        return QueryReply.samples(body);
    }

    private HttpResponse<String> get(String path) throws IOException {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create("http://" + LOOPBACK + ":" + port + path))
                        .timeout(QUERY_TIMEOUT)
                        .build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", ex);
        }
    }

    /** Stops the server and deletes its directory. */
    @Override
    public void close() {
        workspace.close();
    }

    @Override
    public String toString() {
        return "PrometheusServer[" + LOOPBACK + ":" + port + "]";
    }
}
