package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.integration.support.SmartLifecycleRoleController;

/**
 * Review probe: an endpoint of the redlease role that starts with the application would run on
 * every instance; startup must refuse it, naming it, before it starts.
 */
@ExtendWith(RedisExtension.class)
class IntegrationRoleProbeTests {

    @Test
    void anAutoStartingEndpointOfTheRoleIsRefusedAtStartup(RedisServer server) {
        SpringApplicationBuilder builder =
                new SpringApplicationBuilder(IntegrationProbeApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=integration-probe-" + System.nanoTime(),
                                "redlease.auto-startup=false");
        ConfigurableApplicationContext[] started = new ConfigurableApplicationContext[1];
        try {
            assertThatException()
                    .isThrownBy(() -> started[0] = builder.run())
                    .withStackTraceContaining("autoTicker")
                    .withStackTraceContaining("autoStartup");
        } finally {
            if (started[0] != null) {
                assertThat(
                                started[0]
                                        .getBean(SmartLifecycleRoleController.class)
                                        .noEndpointsRunning("leader"))
                        .as("role endpoint running on an instance that does not lead")
                        .isTrue();
                started[0].close();
            }
        }
    }
}
