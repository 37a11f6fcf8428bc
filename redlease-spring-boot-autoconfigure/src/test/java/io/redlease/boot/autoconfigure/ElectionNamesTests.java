package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elections;
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

/** Elections whose Redis keys would coincide are refused at startup, naming both properties. */
@ExtendWith(RedisExtension.class)
class ElectionNamesTests {

    private ApplicationContextRunner contextRunner;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.name =
                "redlease-names:"
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
                                "redlease.name=" + name,
                                "redlease.auto-startup=false");
    }

    @Test
    void anElectionOnTheMainElectionsNameIsRefused() {
        contextRunner
                .withPropertyValues("redlease.elections.reports.name=" + name)
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .isInstanceOf(
                                                InvalidConfigurationPropertyValueException.class)
                                        .hasMessageContaining("redlease.elections.reports.name")
                                        .hasMessageContaining("also that of redlease.name"));
    }

    @Test
    void twoElectionsOnOneNameAreRefused() {
        contextRunner
                .withPropertyValues(
                        "redlease.elections.reports.name=" + name + "-jobs",
                        "redlease.elections.billing.name=" + name + "-jobs")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .hasMessageContaining("redlease.elections.reports.name")
                                        .hasMessageContaining("redlease.elections.billing.name"));
    }

    @Test
    void anElectionNamedLikeAPartitionIsRefused() {
        contextRunner
                .withPropertyValues(
                        "redlease.partitions.orders.count=4",
                        "redlease.partitions.orders.name=" + name + "-orders",
                        "redlease.elections.audit.name={" + name + "-orders:p3}")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .hasMessageContaining("redlease.elections.audit.name")
                                        .hasMessageContaining("a partition of")
                                        .hasMessageContaining("redlease.partitions.orders.name"));
    }

    @Test
    void distinctNamesStart() {
        contextRunner
                .withPropertyValues(
                        "redlease.partitions.orders.count=2",
                        "redlease.partitions.invoices.count=2",
                        "redlease.elections.audit.name={" + name + ":orders:p}",
                        "redlease.elections.reports.name=" + name + ":reports")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context.getBean(Elections.class).ids())
                                    .containsExactlyInAnyOrder(
                                            Elections.DEFAULT, "audit", "reports");
                        });
    }
}
