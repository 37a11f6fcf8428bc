package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;

/**
 * One WARN per {@code redlease.*} key that no property has, with the nearest known one; none for a
 * known key however it is written. Redlease is switched off here, so nothing else needs Redis.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertyWarningTests {

    private final ApplicationContextRunner contextRunner =
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(RedleaseChecksAutoConfiguration.class))
                    .withPropertyValues("redlease.enabled=false");

    private static List<String> warnings(CapturedOutput output) {
        return output.toString().lines().filter(line -> line.contains("unknown property")).toList();
    }

    private static ApplicationContextRunner with(
            ApplicationContextRunner runner, PropertySource<?> source) {
        return runner.withInitializer(
                (ConfigurableApplicationContext context) ->
                        context.getEnvironment().getPropertySources().addFirst(source));
    }

    @Test
    void aMisspeltKeyIsNamedOnceWithTheNearestKnownKey(CapturedOutput output) {
        contextRunner
                .withPropertyValues("redlease.tll=2s")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(warnings(output))
                .singleElement()
                .asString()
                .contains("WARN")
                .contains("redlease: unknown property 'redlease.tll'")
                .contains("is ignored; did you mean 'redlease.ttl'?");
    }

    @Test
    void aKeySetInSeveralPlacesIsNamedOnce(CapturedOutput output) {
        with(
                        contextRunner.withPropertyValues("redlease.tll=2s"),
                        new MapPropertySource("more", Map.of("redlease.tll", "3s")))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(warnings(output)).hasSize(1);
    }

    @Test
    void theSwitchItselfMisspeltIsNamed(CapturedOutput output) {
        contextRunner
                .withPropertyValues("redlease.enable=false")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(warnings(output))
                .singleElement()
                .asString()
                .contains("'redlease.enable'")
                .contains("did you mean 'redlease.enabled'?");
    }

    @Test
    void anEnvironmentVariableIsNamedInItsRelaxedForm(CapturedOutput output) {
        with(
                        contextRunner,
                        new SystemEnvironmentPropertySource(
                                "test-systemEnvironment",
                                Map.of(
                                        "REDLEASE_RENEW_INTERVALL", "1s",
                                        "REDLEASE_RENEWINTERVAL", "1s",
                                        "REDLEASE_TEST_REDIS_URL", "redis://x",
                                        "REDLEASE_GO", "/usr/bin/go")))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(warnings(output))
                .singleElement()
                .asString()
                .contains("'redlease.renew.intervall'")
                .contains("REDLEASE_RENEW_INTERVALL")
                .contains("did you mean 'redlease.renew-interval'?");
    }

    @Test
    void aYamlKeyUnderAnElectionIsNamedWithItsLineAndTheElectionsKey(CapturedOutput output)
            throws IOException {
        List<PropertySource<?>> yaml =
                new YamlPropertySourceLoader()
                        .load("yaml", new ClassPathResource("switches/unknown-keys.yml"));
        with(contextRunner, yaml.get(0)).run(context -> assertThat(context).hasNotFailed());
        assertThat(warnings(output))
                .singleElement()
                .asString()
                .contains("'redlease.elections.audit.tll'")
                .contains("unknown-keys.yml")
                .contains("unknown-keys.yml] - 6:")
                .contains("did you mean 'redlease.elections.audit.ttl'?");
    }

    @Test
    void knownKeysNeverWarnHoweverTheyAreWritten(CapturedOutput output) throws IOException {
        Map<String, Object> properties = new LinkedHashMap<>();
        for (String name : metadataNames()) {
            properties.put(name, "x");
        }
        properties.put("redlease.renewInterval", "1s");
        properties.put("redlease.lifecycle.listeners[0]", "orders");
        properties.put("redlease.elections.audit.ttl", "2s");
        properties.put("redlease.elections.audit.renew-interval", "1s");
        properties.put("redlease.elections.audit.lifecycle.listeners[1]", "audit");
        properties.put("redlease.elections[billing].auto-startup", "false");
        properties.put("redlease.partitions.tenants.count", "4");
        properties.put("redlease.partitions.tenants.balance-interval", "1s");
        properties.put("redlease.partitions.tenants.settle", "1s");
        properties.put("redlease.discovery.attributes.region", "eu");
        properties.put("redlease.discovery.attributes.zone.name", "eu-1");
        properties.put("redlease.scheduling", "");
        Map<String, Object> variables =
                Map.of(
                        "REDLEASE_ELECTIONS_AUDIT_ACQUIREINTERVAL", "1s",
                        "REDLEASE_LIFECYCLE_LISTENERS_0", "orders",
                        "REDLEASE_PARTITIONS_TENANTS_BALANCEINTERVAL", "1s");
        with(
                        with(contextRunner, new MapPropertySource("known", properties)),
                        new SystemEnvironmentPropertySource("test-systemEnvironment", variables))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(metadataNames()).contains("redlease.ttl", "redlease.elections");
        assertThat(warnings(output)).isEmpty();
    }

    /** Reads the generated metadata's redlease.* property names, independently of the warning. */
    private static List<String> metadataNames() throws IOException {
        try (InputStream in = new ClassPathResource(KnownProperties.METADATA).getInputStream()) {
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            List<String> names = new ArrayList<>();
            Matcher name =
                    Pattern.compile("\"name\"\\s*:\\s*\"(redlease\\.[^\"]+)\"").matcher(json);
            while (name.find()) {
                names.add(name.group(1));
            }
            return names;
        }
    }
}
