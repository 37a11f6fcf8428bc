package io.redlease.samples.jms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

import io.redlease.test.ArtemisServer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jms.config.JmsListenerEndpointRegistry;
import org.springframework.jms.core.JmsTemplate;

/**
 * The sample in this JVM on a real Artemis broker and Redis: elected, it consumes and applies
 * orders; with its session's transaction switched off it is refused at startup.
 */
@ExtendWith(RedisExtension.class)
class JmsListenerApplicationTests {

    private static final ArtemisServer artemis = ArtemisServer.shared();

    private String queue;

    @BeforeEach
    void setUp() {
        queue = artemis.newQueue("orders");
    }

    @AfterEach
    void tearDown() {
        artemis.deleteQueue(queue);
    }

    private ConfigurableApplicationContext run(RedisServer server, String name, String... more) {
        String[] arguments = {
            "--spring.main.web-application-type=none",
            "--spring.data.redis.url=" + server.url(),
            "--ARTEMIS_URL=" + artemis.url(),
            "--sample.queue=" + queue,
            "--redlease.name=" + name
        };
        String[] all = new String[arguments.length + more.length];
        System.arraycopy(arguments, 0, all, 0, arguments.length);
        System.arraycopy(more, 0, all, arguments.length, more.length);
        return SpringApplication.run(JmsListenerApplication.class, all);
    }

    @Test
    void theLeaderConsumesAndAppliesEachOrderThroughTheFence(RedisServer server) {
        String name = "{orders-jms-app-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext context = run(server, name)) {
            JmsListenerEndpointRegistry registry =
                    context.getBean(JmsListenerEndpointRegistry.class);
            await().until(() -> registry.getListenerContainer("orders").isRunning());
            JmsTemplate template = context.getBean(JmsTemplate.class);
            template.convertAndSend(queue, "o1");
            template.convertAndSend(queue, "o2");
            StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
            await().until(() -> redis.opsForList().size(name + ":applied") == 2);
            assertThat(redis.opsForList().range(name + ":applied", 0, -1))
                    .containsExactly("o1", "o2");
            await().until(() -> artemis.messageCount(queue) == 0);
        }
    }

    @Test
    void aListenerSessionThatIsNotTransactedIsRefusedAtStartup(RedisServer server) {
        String name = "{orders-jms-refused-" + System.nanoTime() + "}";
        assertThatException()
                .isThrownBy(
                        () -> run(server, name, "--spring.jms.listener.session.transacted=false"))
                .withStackTraceContaining(
                        "redlease: the JMS listener container 'orders' is not transacted and"
                                + " acknowledges in mode AUTO_ACKNOWLEDGE")
                .withStackTraceContaining("spring.jms.listener.session.transacted=true");
    }
}
