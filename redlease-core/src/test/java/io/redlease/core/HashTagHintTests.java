package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A name without a hash tag on a connection that is not a Redis Cluster one gets one INFO line:
 * behind a cluster proxy, which looks like a single server, it needs a tag or its scripts fail with
 * CROSSSLOT.
 */
@ExtendWith(RedisExtension.class)
class HashTagHintTests {

    private final Templates templates = new Templates();

    @AfterEach
    void tearDown() {
        templates.close();
    }

    @Test
    void aNameWithoutAHashTagGetsOneInfoLineAboutClusterProxies(RedisServer server, TestInfo info) {
        StringRedisTemplate redis = templates.on(server);
        String untagged = Names.unique(info);
        String tagged = "{" + Names.unique(info) + "}";
        List<ILoggingEvent> logged =
                logged(
                        () -> {
                            new Elector(redis, ElectorConfig.builder(untagged).build());
                            new Elector(redis, ElectorConfig.builder(untagged).build());
                            new Elector(redis, ElectorConfig.builder(tagged).build());
                        });
        List<ILoggingEvent> hints =
                logged.stream().filter(e -> e.getFormattedMessage().contains("hash tag")).toList();
        assertThat(hints).hasSize(1);
        ILoggingEvent hint = hints.get(0);
        assertThat(hint.getLevel()).isEqualTo(Level.INFO);
        assertThat(hint.getLoggerName()).isEqualTo("io.redlease.election");
        assertThat(hint.getFormattedMessage())
                .contains("'" + untagged + "'")
                .contains("CROSSSLOT")
                .contains("'{" + untagged + "}'")
                .doesNotContain(tagged);
    }

    private static List<ILoggingEvent> logged(Runnable action) {
        Logger election = (Logger) LoggerFactory.getLogger("io.redlease.election");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        election.addAppender(appender);
        try {
            action.run();
        } finally {
            election.detachAppender(appender);
        }
        return List.copyOf(appender.list);
    }
}
