package io.redlease.boot.app.switches;

import io.redlease.core.Elector;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** An application with a bean that injects the main election's {@link Elector}. */
@SpringBootConfiguration
@EnableAutoConfiguration
class ElectorUserApplication {

    @Bean
    Status status(Elector elector) {
        return new Status(elector);
    }

    record Status(Elector elector) {}
}
