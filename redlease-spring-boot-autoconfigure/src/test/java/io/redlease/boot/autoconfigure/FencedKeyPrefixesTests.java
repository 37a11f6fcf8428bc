package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@code redlease.fenced-key-prefixes} and {@code redlease.elections.<id>.fenced-key-prefixes}: the
 * key prefixes, beyond an election's own keys, its fenced writes may name; an extra election does
 * not inherit the main election's.
 */
@ExtendWith(RedisExtension.class)
class FencedKeyPrefixesTests {

    private ApplicationContextRunner contextRunner;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.name =
                "redlease-prefixes:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.auto-startup=false",
                                "redlease.name=" + name);
    }

    @Test
    void theMainElectionsPrefixesAreItsOwnAndNotInherited() {
        contextRunner
                .withPropertyValues(
                        "redlease.fenced-key-prefixes=" + name + "-jobs:," + name + "-reports:",
                        "redlease.elections.audit.name=" + name + "-audit",
                        "redlease.elections.audit.fenced-key-prefixes=" + name + "-trail:")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            Elections elections = context.getBean(Elections.class);
                            Elector main = elections.get(Elections.DEFAULT);
                            Elector audit = elections.get("audit");
                            assertThat(main.config().fencedKeyPrefixes())
                                    .containsExactly(name + "-jobs:", name + "-reports:");
                            assertThat(audit.config().fencedKeyPrefixes())
                                    .containsExactly(name + "-trail:");
                            // Opens the shared connection first: a write with a token that is
                            // no term of this instance waits one TTL, connecting included.
                            context.getBean(StringRedisTemplate.class).hasKey(name);
                            assertThat(main.fencer(1).set(name + "-jobs:report", "v")).isTrue();
                            assertThatIllegalArgumentException()
                                    .isThrownBy(
                                            () -> audit.fencer(1).set(name + "-jobs:report", "v"))
                                    .withMessageContaining("a fence guards its own election's");
                            assertThat(audit.fencer(1).set(name + "-trail:1", "v")).isTrue();
                        });
    }

    @Test
    void withoutPrefixesOnlyTheElectionsOwnKeysAreWritable() {
        contextRunner.run(
                context -> {
                    Elector main = context.getBean(Elections.class).get(Elections.DEFAULT);
                    assertThat(main.config().fencedKeyPrefixes()).isEmpty();
                    assertThatIllegalArgumentException()
                            .isThrownBy(() -> main.fencer(1).set("jobs:report", "v"))
                            .withMessageContaining("redlease.fenced-key-prefixes");
                });
    }

    @Test
    void anEmptyPrefixFailsStartupNamingTheProperty() {
        contextRunner
                .withPropertyValues(
                        "redlease.elections.audit.name=" + name + "-audit",
                        "redlease.elections.audit.fenced-key-prefixes[0]=" + name + "-trail:",
                        "redlease.elections.audit.fenced-key-prefixes[1]=")
                .run(
                        context -> {
                            Throwable cause = context.getStartupFailure();
                            while (cause != null
                                    && !(cause
                                            instanceof
                                            InvalidConfigurationPropertyValueException)) {
                                cause = cause.getCause();
                            }
                            assertThat(cause)
                                    .isInstanceOfSatisfying(
                                            InvalidConfigurationPropertyValueException.class,
                                            failure -> {
                                                assertThat(failure.getName())
                                                        .isEqualTo(
                                                                "redlease.elections.audit"
                                                                        + ".fenced-key-prefixes");
                                                assertThat(failure.getReason())
                                                        .contains("empty prefix");
                                            });
                        });
    }
}
