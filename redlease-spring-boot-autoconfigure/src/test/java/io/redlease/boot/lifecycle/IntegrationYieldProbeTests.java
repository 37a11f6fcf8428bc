package io.redlease.boot.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.support.SmartLifecycleRoleController;

/**
 * Review probe: Context.yield() called from the OnGrantedEvent listener itself (on the election's
 * lifecycle thread) resigns without deadlocking: revoked, then granted again in order.
 */
@ExtendWith(RedisExtension.class)
class IntegrationYieldProbeTests {

    @Test
    void yieldingFromTheGrantListenerResignsAndIsGrantedAgain(RedisServer server) {
        List<String> events = new CopyOnWriteArrayList<>();
        AtomicBoolean yielded = new AtomicBoolean();
        try (ConfigurableApplicationContext context =
                new SpringApplicationBuilder(IntegrationTestApplication.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=integration-yield-" + System.nanoTime(),
                                "redlease.instance-id=a",
                                "redlease.ttl=3s",
                                "redlease.renew-interval=200ms",
                                "redlease.acquire-interval=300ms")
                        .listeners(
                                (ApplicationListener<AbstractLeaderEvent>)
                                        event -> {
                                            events.add(
                                                    event instanceof OnGrantedEvent
                                                            ? "granted"
                                                            : "revoked");
                                            if (event instanceof OnGrantedEvent
                                                    && yielded.compareAndSet(false, true)) {
                                                event.getContext().yield();
                                            }
                                        })
                        .run()) {
            await().until(() -> events.size() >= 3);
            assertThat(events.subList(0, 3)).containsExactly("granted", "revoked", "granted");
            await().until(
                            () ->
                                    context.getBean(SmartLifecycleRoleController.class)
                                            .allEndpointsRunning("leader"));
        }
    }
}
