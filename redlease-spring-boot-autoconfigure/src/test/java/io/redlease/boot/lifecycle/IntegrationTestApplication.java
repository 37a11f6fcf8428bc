package io.redlease.boot.lifecycle;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.annotation.InboundChannelAdapter;
import org.springframework.integration.annotation.Poller;
import org.springframework.integration.annotation.Role;
import org.springframework.integration.channel.NullChannel;
import org.springframework.integration.config.EnableIntegration;

/**
 * A Spring Integration application with an inbound endpoint in the role "leader", and nothing of
 * redlease but the starter's auto-configuration.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableIntegration
class IntegrationTestApplication {

    /** Every poll of every instance's inbound endpoint, by instance id. */
    static final List<String> polls = new CopyOnWriteArrayList<>();

    @Bean
    NullChannel ticks() {
        return new NullChannel();
    }

    @Bean
    Ticker ticker(@Value("${redlease.instance-id}") String instance) {
        return new Ticker(instance);
    }

    /** A polled source that records each poll. */
    static class Ticker {

        private final String instance;

        Ticker(String instance) {
            this.instance = instance;
        }

        @InboundChannelAdapter(
                value = "ticks",
                autoStartup = "false",
                poller = @Poller(fixedDelay = "20"))
        @Role("leader")
        @Nullable String tick() {
            polls.add(instance);
            return null;
        }
    }
}
