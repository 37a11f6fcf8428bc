package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** What a user sees when the application fails to start over a bad or missing setting. */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class ConfigurationFailureReportTests {

    private static void start(RedisServer server, String... args) {
        new SpringApplicationBuilder(TestApplication.class)
                .web(WebApplicationType.NONE)
                .properties("spring.data.redis.url=" + server.url())
                .run(args);
    }

    @Test
    void aBadValueIsReportedWithWhereItWasSetTheRuleAndTheFix(
            RedisServer server, CapturedOutput output) {
        assertThatException()
                .isThrownBy(
                        () ->
                                start(
                                        server,
                                        "--redlease.name=report-" + System.nanoTime(),
                                        "--redlease.ttl=50ms"));
        assertThat(output)
                .contains(
                        "Invalid value '50ms' for configuration property 'redlease.ttl'"
                                + " (originating from '\"redlease.ttl\" from property source"
                                + " \"commandLineArgs\"')")
                .contains("TTL must be at least 100ms. Set redlease.ttl to at least 100ms");
    }

    @Test
    void aMissingNameIsReportedWithTheFix(RedisServer server, CapturedOutput output) {
        assertThatException().isThrownBy(() -> start(server));
        assertThat(output)
                .contains("Property: redlease.name")
                .contains("Value: (not set)")
                .contains("Set redlease.name");
    }
}
