package io.redlease.boot.app.switches;

import io.redlease.core.annotation.LeaderOnly;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;

/**
 * An application whose only work is a leader-only lifecycle bean (as a consumer that only the
 * leader runs): nothing but redlease keeps a follower's JVM running without a web server.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class LifecycleOnlyApplication {

    @Bean
    Consumer consumer() {
        return new Consumer();
    }

    /** Consumes while this instance leads. */
    @LeaderOnly
    static class Consumer implements SmartLifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
