package io.redlease.boot.lifecycle;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.annotation.InboundChannelAdapter;
import org.springframework.integration.annotation.Poller;
import org.springframework.integration.annotation.Role;
import org.springframework.integration.channel.NullChannel;
import org.springframework.integration.config.EnableIntegration;

/** Review probe: an endpoint in the role "leader" that starts with the application. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableIntegration
class IntegrationProbeApplication {

    @Bean
    NullChannel ticks() {
        return new NullChannel();
    }

    @Bean
    AutoTicker autoTicker() {
        return new AutoTicker();
    }

    /** A polled source in the role "leader" left with autoStartup true. */
    static class AutoTicker {

        @InboundChannelAdapter(value = "ticks", poller = @Poller(fixedDelay = "20"))
        @Role("leader")
        @Nullable String tick() {
            return null;
        }
    }
}
